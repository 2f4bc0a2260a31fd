// The search prices each attention kernel a trainer runs on a layout (a record's also_attention)
// and keeps the best for each knob set, so a layout does not win by its default kernel alone; "why
// this layout" names the kernels where the layouts' best plans run different ones.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/search.hpp"

namespace spplan::search {
namespace {

PlanSpec qwen4b_32k_on(const char* gpu, const char* trainer) {
  PlanSpec p;
  p.model = *load_model("qwen3-4b");
  p.cluster.gpu = *load_gpu(gpu);
  p.cluster.num_gpus = 16;
  p.seq_len = 32768;
  p.stack = *load_trainer(trainer);
  return p;
}

std::tuple<int64_t, int64_t, int, int, int, int, bool, bool, int64_t, int64_t> key_of(const Knobs& k) {
  return {k.sp, k.cp, k.zero_stage, static_cast<int>(k.offload_optimizer), static_cast<int>(k.offload_params),
          static_cast<int>(k.act_ckpt), k.tiled_mlp, k.tiled_loss, k.micro_batch, k.grad_accum_steps};
}

// On an H100 PyTorch's SDPA (cuDNN on Hopper) is priced faster than FlashAttention 2, which hf's
// Ulysses layout loads by default: its Ulysses plans run SDPA, and no knob set is two rows.
TEST(KernelSearch, EachKnobSetOnItsBestKernelOnce) {
  const SearchResult r = search_plans(qwen4b_32k_on("h100-80gb", "hf"), true);
  ASSERT_FALSE(r.feasible.empty());
  // Knob sets are counted, not kernels: each is feasible on its best kernel or rejected once.
  EXPECT_EQ(r.evaluated, static_cast<int64_t>(r.feasible.size() + r.rejected.size()));
  std::set<decltype(key_of(Knobs{}))> seen;
  bool ulysses_on_sdpa = false;
  for (const RankedPlan& p : r.feasible) {
    EXPECT_TRUE(seen.insert(key_of(p.plan.knobs)).second) << "a knob set ranked twice";
    const AttentionKernel k = p.plan.stack.attention;
    EXPECT_TRUE(k == AttentionKernel::kSdpa || k == AttentionKernel::kFlash2);
    if (p.plan.knobs.sp > 1 && p.plan.knobs.cp == 1) ulysses_on_sdpa = ulysses_on_sdpa || k == AttentionKernel::kSdpa;
    // The ring runs SDPA only (torch's context_parallel), whatever the search tries.
    if (p.plan.knobs.cp > 1) EXPECT_EQ(k, AttentionKernel::kSdpa);
  }
  EXPECT_TRUE(ulysses_on_sdpa);
}

// A named kernel is the only one priced; a record without also_attention prices its default only.
TEST(KernelSearch, ANamedKernelOrARecordWithOneKernelIsAllThatIsPriced) {
  PlanSpec named = qwen4b_32k_on("h100-80gb", "hf");
  named.stack.attention = AttentionKernel::kFlash2;
  named.attention_named = true;
  for (const RankedPlan& p : search_plans(named, false).feasible) EXPECT_EQ(p.plan.stack.attention, AttentionKernel::kFlash2);
  for (const RankedPlan& p : search_plans(qwen4b_32k_on("h100-80gb", "arctic"), false).feasible) {
    EXPECT_EQ(p.plan.stack.attention, AttentionKernel::kFlash2);
  }
}

// On an A100 FlashAttention 2 is the faster kernel: Ulysses keeps it, the ring runs SDPA, and the
// reason names both, since the kernel is part of why the layout won.
TEST(KernelSearch, WhyThisLayoutNamesTheKernelsWhereTheyDiffer) {
  const SearchResult r = search_plans(qwen4b_32k_on("a100-80gb", "hf"), true);
  ASSERT_FALSE(r.feasible.empty());
  const std::string why = layout_reason(r);
  EXPECT_NE(why.find("tokens/s on flash2)"), std::string::npos) << why;
  EXPECT_NE(why.find(", on sdpa)"), std::string::npos) << why;
  // Where every layout's best runs one kernel, none is named.
  const std::string same = layout_reason(search_plans(qwen4b_32k_on("h100-80gb", "hf"), true));
  EXPECT_EQ(same.find(" on sdpa"), std::string::npos) << same;
}

// max-seq tries the kernels too: never shorter than the default kernel's answer.
TEST(KernelSearch, MaxSeqIsAtLeastTheDefaultKernelsAnswer) {
  PlanSpec p = qwen4b_32k_on("h100-80gb", "hf");
  const auto searched = max_seq_searched(p, 1024);
  p.stack.attention = AttentionKernel::kFlash2;
  p.attention_named = true;
  const auto flash2_only = max_seq_searched(p, 1024);
  ASSERT_TRUE(searched && flash2_only);
  EXPECT_GE(searched->plan.seq_len, flash2_only->plan.seq_len);
}

}  // namespace
}  // namespace spplan::search
