#include "planner/search/search.hpp"

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"

namespace spplan::search {
namespace {

PlanSpec base(const char* model, int64_t gpus, int64_t seq) {
  PlanSpec p;
  p.model = *load_model(model);
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = gpus;
  p.seq_len = seq;
  return p;
}

TEST(Search, RankedFeasiblePlansAllFitAndAreOrdered) {
  const SearchResult r = search_plans(base("qwen3-4b", 4, 131072), true);
  ASSERT_FALSE(r.feasible.empty());
  EXPECT_EQ(r.evaluated, static_cast<int64_t>(r.feasible.size() + r.rejected.size()));
  for (size_t i = 0; i < r.feasible.size(); ++i) {
    EXPECT_TRUE(r.feasible[i].estimate.fits);
    if (i > 0) {
      EXPECT_FALSE(ranks_before(r.feasible[i], r.feasible[i - 1]));
    }
  }
  for (const auto& rej : r.rejected) EXPECT_FALSE(rej.reason.empty());
}

TEST(Search, CandidatesRespectThePlanRules) {
  for (const Knobs& k : candidate_knobs(base("qwen3-4b", 8, 8192))) {
    EXPECT_EQ(8 % k.sp, 0);
    if (k.offload_params != OffloadDevice::kNone) {
      EXPECT_EQ(k.zero_stage, 3);
    }
  }
}

TEST(MaxSeq, FixedKnobsBoundaryFitsAndOneStepMoreDoesNot) {
  PlanSpec p = base("llama-3.1-8b", 8, 1024);
  p.knobs.sp = 8;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  p.knobs.tiled_loss = true;
  const int64_t max = max_seq_fixed(p, 1024);
  ASSERT_GT(max, 0);
  p.seq_len = max;
  EXPECT_TRUE(costmodel::estimate(p).fits);
  p.seq_len = max + 1024;
  EXPECT_FALSE(costmodel::estimate(p).fits);
}

TEST(MaxSeq, SearchedIsAtLeastAnyFixedChoice) {
  PlanSpec p = base("qwen3-4b", 4, 1024);
  const auto best = max_seq_searched(p, 1024);
  ASSERT_TRUE(best.has_value());
  p.knobs.sp = 4;
  EXPECT_GE(best->plan.seq_len, max_seq_fixed(p, 1024));
}

// `spplan max-seq` has no sequence yet (seq_len 0), which the plan rules refuse: the search must
// still enumerate the knobs (it once found nothing and reported 0).
TEST(MaxSeq, SearchedNeedsNoSequenceLength) {
  PlanSpec p = base("qwen3-4b", 4, 0);
  const auto best = max_seq_searched(p, 1024);
  ASSERT_TRUE(best.has_value());
  p.seq_len = 1024;
  EXPECT_EQ(best->plan.seq_len, max_seq_searched(p, 1024)->plan.seq_len);
}

TEST(Fit, SmallestClusterForAModelThatNeedsSeveralGpus) {
  // Llama-3.1-70B at 1M tokens cannot fit on one H100; some power-of-two count does.
  const auto n = smallest_fitting_gpus(base("llama-3.1-70b", 1, 1 << 20), 4096);
  ASSERT_TRUE(n.has_value());
  EXPECT_GT(*n, 1);
  PlanSpec p = base("llama-3.1-70b", *n / 2, 1 << 20);
  EXPECT_TRUE(search_plans(p, false).feasible.empty());
}

}  // namespace
}  // namespace spplan::search
