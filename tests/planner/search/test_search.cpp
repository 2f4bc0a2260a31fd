#include "planner/search/search.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "tests/planner/search/ranked_plans.hpp"

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
    // Inside a group (safe plans first, then the risky), tokens/s never rise by more than the noise
    // band from one plan to the next.
    if (i > 0 && is_safe(r.feasible[i]) == is_safe(r.feasible[i - 1])) {
      EXPECT_LE(r.feasible[i].estimate.tokens_per_s,
                r.feasible[i - 1].estimate.tokens_per_s / (1.0 - kRankNoiseBand) * (1 + 1e-12));
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

// A ring over more ranks than the granularity's zigzag allows (2 x 1 x 1024 = 2048 tokens does not
// divide 1024) is still searched, on its own unit: 2048-token steps.
TEST(MaxSeq, RingBeyondTheGranularityIsSearchedOnItsUnit) {
  PlanSpec ring = base("llama-3.1-8b", 1024, 0);
  ring.stack = trainer_stack("engine");
  EXPECT_EQ(sequence_unit(ring, 1024), 1024);
  ring.knobs.cp = 1024;
  EXPECT_EQ(sequence_unit(ring, 1024), 2048);
  ring.knobs.sp = 2;
  ring.knobs.cp = 3;
  EXPECT_EQ(sequence_unit(ring, 1024), 3072);  // lcm(1024, 12)
  // A trainer that does not pad splits each sequence evenly over the Ulysses ranks (DeepSpeed's
  // ulysses_sp.py raises otherwise): with sp 3 the unit is a multiple of 3 too.
  PlanSpec ulysses = ring;
  ulysses.stack = trainer_stack("arctic");
  ulysses.knobs.sp = 3;
  ulysses.knobs.cp = 1;
  EXPECT_EQ(sequence_unit(ulysses, 1024), 3072);
  ulysses.stack = trainer_stack("engine");  // it pads
  EXPECT_EQ(sequence_unit(ulysses, 1024), 1024);
  KnobConstraints only_ring;
  only_ring.sp = 1;
  only_ring.cp = 1024;
  PlanSpec hf = base("llama-3.1-8b", 1024, 0);
  hf.stack = trainer_stack("hf");  // a trainer that runs a ring alone (Accelerate's context parallel)
  const auto best = max_seq_searched(hf, 1024, only_ring);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->plan.knobs.cp, 1024);
  EXPECT_EQ(best->plan.seq_len % 2048, 0);
  EXPECT_TRUE(best->estimate.fits);
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

// Inside the noise band of the fastest plan, the first is what a user prefers: fewest offloads,
// then the smallest micro batch (before, params=cpu ranked first on a 0.000 s exposed cost, and
// mb=2 beat mb=1 on 0.03% while doubling the global batch).
TEST(Search, TiesWithinTheNoiseBandGoToFewerOffloadsAndSmallerBatches) {
  const SearchResult r = search_plans(base("qwen3-4b", 4, 131072), false);
  ASSERT_FALSE(r.feasible.empty());
  double fastest = 0;
  for (const auto& p : r.feasible) fastest = std::max(fastest, p.estimate.tokens_per_s);
  const double floor = fastest * (1.0 - kRankNoiseBand);
  EXPECT_GE(r.feasible.front().estimate.tokens_per_s, floor);  // first: in the fastest plan's band
  for (const auto& p : r.feasible) {
    if (p.estimate.tokens_per_s < floor) continue;
    const Knobs& best = r.feasible.front().plan.knobs;
    EXPECT_LE(offload_count(best), offload_count(p.plan.knobs));
    if (offload_count(best) == offload_count(p.plan.knobs)) {
      EXPECT_LE(best.micro_batch, p.plan.knobs.micro_batch);
    }
  }
  EXPECT_EQ(offload_count(r.feasible.front().plan.knobs), 0);
  EXPECT_EQ(r.feasible.front().plan.knobs.micro_batch, 1);
}

// A hand-made plan: tokens/s, % free, optimizer offloaded, the measured error it is held against.
RankedPlan ranked(double tokens_per_s, double free_pct, bool offload_optimizer, double error_pct) {
  return testing_ranked::ranked(tokens_per_s, free_pct, error_pct, offload_optimizer);
}

// Inside a noise band, a plan that fits by less than the largest measured memory error
// (it may not fit when it runs) ranks after one that fits by more, whatever else it saves.
TEST(Search, InsideTheBandAPlanBeyondTheMeasuredErrorComesFirst) {
  // Nothing measured: the faster plan without an offload first, though it leaves 1% free.
  std::vector<RankedPlan> plans{ranked(1000, 1.0, false, 0), ranked(990, 12.0, true, 0)};
  rank_plans(&plans);
  EXPECT_FLOAT_EQ(plans.front().estimate.tokens_per_s, 1000);
  // A measured error of 5%: the 1% plan may not fit; the one with 12% free goes first.
  plans = {ranked(1000, 1.0, false, 5), ranked(990, 12.0, true, 5)};
  EXPECT_TRUE(inside_measured_error(plans[0]));
  EXPECT_FALSE(inside_measured_error(plans[1]));
  rank_plans(&plans);
  EXPECT_FLOAT_EQ(plans.front().estimate.tokens_per_s, 990);
  // Outside the band speed decides by --risky only: 3% slower is not a tie there, but safe plans
  // rank first by default whatever their speed.
  plans = {ranked(1000, 1.0, false, 5), ranked(970, 12.0, true, 5)};
  rank_plans(&plans, Ranking::kSpeedOnly);
  EXPECT_FLOAT_EQ(plans.front().estimate.tokens_per_s, 1000);
  rank_plans(&plans);
  EXPECT_FLOAT_EQ(plans.front().estimate.tokens_per_s, 970);
  // Both inside the error: the older preferences decide (no offload first).
  plans = {ranked(990, 2.0, true, 5), ranked(1000, 1.0, false, 5)};
  rank_plans(&plans);
  EXPECT_FLOAT_EQ(plans.front().estimate.tokens_per_s, 1000);
}

// The verdict and the ranking draw the line at the same place: free memory equal to the error is
// inside it.
TEST(Search, TheLineIsTheVerdicts) {
  const ErrorStats measured{4, 2.0, 5.0};
  for (const double free_pct : {4.99, 5.0, 5.01, 20.0}) {
    const RankedPlan p = ranked(1000, free_pct, false, measured.max_abs_pct);
    EXPECT_EQ(inside_measured_error(p), memory_verdict(p.estimate, measured, "x").verdict == Verdict::kFitsInsideError)
        << free_pct;
  }
  EXPECT_TRUE(inside_measured_error(ranked(1000, 5.0, false, 5)));
  EXPECT_FALSE(inside_measured_error(ranked(1000, 0.0, false, 0)));
}

TEST(Search, ConstraintsKeepOnlyAgreeingKnobSets) {
  KnobConstraints c;
  c.zero_stage = 2;
  c.offload_params = OffloadDevice::kNone;
  const SearchResult r = search_plans(base("qwen3-4b", 4, 32768), false, c);
  ASSERT_FALSE(r.feasible.empty());
  for (const auto& p : r.feasible) {
    EXPECT_EQ(p.plan.knobs.zero_stage, 2);
    EXPECT_EQ(p.plan.knobs.offload_params, OffloadDevice::kNone);
  }
}

// `plan --trainer engine` ranks nothing `spplan run` refuses, and says what it left out.
TEST(Search, TrainerEngineCandidatesAreWhatTheEngineRuns) {
  PlanSpec p = base("tiny-llama", 2, 4096);
  p.cluster.gpu.nvme_GBps_per_node = 10;
  p.stack = trainer_stack("engine");
  const SearchResult r = search_plans(p, true);
  ASSERT_FALSE(r.feasible.empty());
  for (const auto& plan : r.feasible) {
    const Knobs& k = plan.plan.knobs;
    EXPECT_NE(k.offload_optimizer, OffloadDevice::kNvme);
    EXPECT_NE(k.offload_params, OffloadDevice::kNvme);
    EXPECT_FALSE(k.zero_stage == 3 && k.act_ckpt == ActCkpt::kNone);
    EXPECT_FALSE(k.cp > 1 && k.cp_comm != CpComm::kRing);  // the engine's ring passes K/V, no all-gather
  }
  EXPECT_FALSE(r.excluded_by_trainer.empty());
}

// The smallest count is the smallest, whatever count was asked about (once, fit on 8 GPUs said
// 8 where 2 fit).
TEST(Fit, SmallestCountIsTheSmallestEvenWhenTheAskedCountFits) {
  const PlanSpec p = base("llama-3.1-8b", 8, 1 << 20);
  const auto n = smallest_fitting_gpus(p, 8);
  ASSERT_TRUE(n.has_value());
  EXPECT_LT(*n, 8);
  EXPECT_FALSE(search_plans(base("llama-3.1-8b", *n, 1 << 20), false).feasible.empty());
  if (*n > 1) {
    EXPECT_TRUE(search_plans(base("llama-3.1-8b", *n - 1, 1 << 20), false).feasible.empty());
  }
}

// The search goes past the old 64M cap, and an answer at the cap says it is a lower bound.
TEST(MaxSeq, SearchGoesBeyond64MAndFlagsTheCap) {
  EXPECT_GT(kMaxSearchedSeqLen, int64_t{64} << 20);
  EXPECT_TRUE(at_search_cap(kMaxSearchedSeqLen, 1024));
  EXPECT_FALSE(at_search_cap(kMaxSearchedSeqLen - 1024, 1024));
  PlanSpec p = base("tiny-llama", 8, 1024);
  p.cluster.gpu = *load_gpu("h200-141gb");
  p.stack.attention = AttentionKernel::kFlash3;  // FlashAttention 2's index range stops it at 64M
  p.attention_named = true;
  const auto best = max_seq_searched(p, 1024);  // about 98M tokens: the old search stopped at 64M
  ASSERT_TRUE(best.has_value());
  p = best->plan;
  const int64_t max = best->plan.seq_len;
  EXPECT_GT(max, int64_t{64} << 20);
  EXPECT_EQ(max_seq_fixed(p, 1024), max);
  EXPECT_TRUE(costmodel::estimate(p).fits);
  if (!at_search_cap(max, 1024)) {
    p.seq_len = max + 1024;
    EXPECT_FALSE(costmodel::estimate(p).fits);
  }
}

// gpt-oss: its attention sinks train under flex_attention only, and at sp 1 and cp 1
// (plan_rules.cpp check_attention_sinks), so the HF Trainer's plans are data parallel with flex;
// the engine, which has no sinks, refuses the model.
TEST(Search, GptOssPlansOnTheHfTrainerWithFlexWithoutASequenceSplit) {
  PlanSpec p = base("gpt-oss-20b", 8, 16384);
  p.stack = trainer_stack("hf");
  const SearchResult r = search_plans(p, false);
  ASSERT_FALSE(r.feasible.empty());
  for (const auto& plan : r.feasible) {
    EXPECT_EQ(plan.plan.stack.attention, AttentionKernel::kFlex);
    EXPECT_EQ(plan.plan.knobs.sp, 1);
    EXPECT_EQ(plan.plan.knobs.cp, 1);
  }
  p.stack = trainer_stack("engine");
  EXPECT_TRUE(search_plans(p, false).feasible.empty());
}

// GLM-4.5-Air: the HF Trainer and ArcticTraining run transformers' Glm4MoeForCausalLM
// with Ulysses, the engine its own GLM layer; trainers whose kernels for it spplan has not read
// (Liger's) or whose models are their own (TorchTitan's) refuse it in one line naming the model.
TEST(Search, GlmAirPlansOnTheHfStacksAndTheEngineLigerRefusesIt) {
  PlanSpec p = base("glm-4.5-air", 8, 65536);
  p.cluster.gpu = load_gpu("h200-141gb").value();
  for (const char* trainer : {"hf", "arctic", "engine"}) {
    p.stack = trainer_stack(trainer);
    const SearchResult r = search_plans(p, false);
    ASSERT_FALSE(r.feasible.empty()) << trainer;
    EXPECT_TRUE(std::any_of(r.feasible.begin(), r.feasible.end(), [](const auto& f) { return f.plan.knobs.sp > 1; }))
        << trainer;
  }
  for (const char* trainer : {"liger", "torchtitan"}) {
    p.stack = trainer_stack(trainer);
    p.knobs.tiled_loss = trainer == std::string("liger");  // Liger's loss: so that the model is what its rules refuse
    p.knobs.zero_stage = 3;  // TorchTitan's FSDP2
    EXPECT_TRUE(search_plans(p, false).feasible.empty()) << trainer;
    const Status refused = check_plan(p, flag_where);
    ASSERT_FALSE(refused.is_ok()) << trainer;
    const std::string why = trainer == std::string("liger")
                                ? "--model: value \"glm-4.5-air\" (GLM-4.5's mixture: a shared expert, dense first layers, "
                                  "a sigmoid router)"
                                : "--model: value \"glm-4.5-air\" is not a model trainer \"torchtitan\" builds";
    EXPECT_NE(refused.message().find(why), std::string::npos) << refused.message();
    EXPECT_EQ(refused.message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace spplan::search
