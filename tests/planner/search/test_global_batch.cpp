// The recipe is an input: with a global batch every plan trains it (micro batch x accumulation x dp
// = N) and a layout whose dp cannot make it is left out, counted; without one, accumulation stays
// the base plan's, so no two plans differ only in accumulation.
#include <gtest/gtest.h>

#include <string>

#include "planner/config/loaders.hpp"
#include "planner/search/search.hpp"

namespace spplan::search {
namespace {

PlanSpec llama_on(int64_t gpus) {
  PlanSpec p;
  p.model = *load_model("llama-3.1-8b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = gpus;
  p.seq_len = 131072;
  return p;
}

TEST(GlobalBatch, EveryPlanTrainsTheRecipesBatch) {
  KnobConstraints c;
  c.global_batch = 16;
  const SearchResult r = search_plans(llama_on(8), true, c);
  ASSERT_FALSE(r.feasible.empty());
  bool accumulates = false;
  for (const auto& p : r.feasible) {
    EXPECT_EQ(global_batch(p.plan), 16) << p.plan.knobs.sp << " " << p.plan.knobs.micro_batch;
    accumulates = accumulates || p.plan.knobs.grad_accum_steps > 1;
  }
  EXPECT_TRUE(accumulates);  // dp 1 at sp 8: the batch is made up by accumulation
  for (const auto& [reason, count] : r.excluded_by_trainer) {  // 16 divides every dp of 8 GPUs
    EXPECT_NE(reason.rfind("--global-batch", 0), 0u) << reason;
  }
}

// 3 sequences: only dp 1 (sp 8) makes it; sp 1, 2 and 4 (dp 8, 4, 2) are left out, counted.
TEST(GlobalBatch, ALayoutThatCannotDivideItIsLeftOutAndCounted) {
  KnobConstraints c;
  c.global_batch = 3;
  const SearchResult r = search_plans(llama_on(8), true, c);
  ASSERT_FALSE(r.feasible.empty());
  for (const auto& p : r.feasible) EXPECT_EQ(p.plan.dp(), 1);
  const std::string reason =
      "--global-batch: value 3 is not micro batch x accumulation x dp for the layout's dp (GPUs / (sp x cp)) (allowed: a "
      "multiple of dp)";
  ASSERT_EQ(r.excluded_by_trainer.count(reason), 1u);
  EXPECT_GT(r.excluded_by_trainer.at(reason), 0);
  // The fixed micro batch must divide each rank's share too: 4 does not divide 3.
  c.micro_batch = 4;
  EXPECT_TRUE(search_plans(llama_on(8), false, c).feasible.empty());
}

TEST(GlobalBatch, WithoutOneNoTwoPlansDifferOnlyInAccumulation) {
  const SearchResult r = search_plans(llama_on(8), false);
  ASSERT_FALSE(r.feasible.empty());
  for (const auto& p : r.feasible) {
    EXPECT_EQ(p.plan.knobs.grad_accum_steps, 1);
    EXPECT_EQ(global_batch(p.plan), p.plan.knobs.micro_batch * p.plan.dp());
  }
  // --grad-accum 4 fixes it on every plan alike.
  PlanSpec four = llama_on(8);
  four.knobs.grad_accum_steps = 4;
  for (const auto& p : search_plans(four, false).feasible) EXPECT_EQ(p.plan.knobs.grad_accum_steps, 4);
}

// max-seq under a global batch: its longest plan trains that batch as well.
TEST(GlobalBatch, TheLongestSequenceKeepsTheBatch) {
  KnobConstraints c;
  c.global_batch = 8;
  const auto best = max_seq_searched(llama_on(8), 1024, c);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(global_batch(best->plan), 8);
}

}  // namespace
}  // namespace spplan::search
