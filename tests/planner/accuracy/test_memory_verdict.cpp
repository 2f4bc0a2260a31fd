// planner/accuracy: the measured error read from results files, the verdict held against it, and
// the headroom a renter asks for (costmodel/estimate.cpp).
#include "planner/accuracy/memory_verdict.hpp"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"

namespace spplan {
namespace {

costmodel::Estimate fitting(double need_gib, double capacity_gib) {
  costmodel::Estimate e;
  e.capacity_bytes = e.usable_bytes = capacity_gib * kGiB;
  e.memory.activations_bytes = need_gib * kGiB;
  e.fits = need_gib <= capacity_gib;
  if (!e.fits) e.limit = costmodel::Estimate::Limit::kGpuMemory;
  return e;
}

TEST(MemoryVerdict, GreenBeyondTheLargestErrorAmberInsideIt) {
  const ErrorStats error{12, 3.8, 14.8};
  const MemoryVerdict roomy = memory_verdict(fitting(71.8, 79.6), error, "h100-80gb");
  EXPECT_EQ(roomy.verdict, Verdict::kFitsInsideError);  // 9.8% to spare, inside 14.8%
  const MemoryVerdict green = memory_verdict(fitting(60.0, 80.0), error, "h100-80gb");
  EXPECT_EQ(green.verdict, Verdict::kFits);
  EXPECT_NEAR(green.margin_pct, 25.0, 1e-9);
  EXPECT_EQ(green.words, "fits with 25.0% of GPU memory to spare, more than the largest measured memory error "
                         "(14.8%, 12 runs of h100-80gb)");
  const MemoryVerdict tight = memory_verdict(fitting(79.3, 79.6), error, "arctic on h100-80gb");
  EXPECT_EQ(tight.verdict, Verdict::kFitsInsideError);
  EXPECT_NE(tight.words.find("inside the largest measured memory error (14.8%, 12 runs of arctic on h100-80gb): it "
                             "may not fit when it runs"),
            std::string::npos)
      << tight.words;
  EXPECT_EQ(memory_verdict(fitting(85, 79.6), error, "h100-80gb").verdict, Verdict::kDoesNotFit);
  const MemoryVerdict unmeasured = memory_verdict(fitting(79.3, 79.6), ErrorStats{}, "b200");
  EXPECT_EQ(unmeasured.verdict, Verdict::kFits);
  EXPECT_NE(unmeasured.words.find("no measured memory error for b200"), std::string::npos);
  EXPECT_EQ(to_string(Verdict::kFitsInsideError), "fits_inside_error");
}

TEST(MeasuredAccuracy, TheTrainersRowsWhenItHasAnyElseTheGpus) {
  const std::string path = ::testing::TempDir() + "/accuracy.json";
  std::ofstream(path) << R"({"rows": [
      {"gpu": "h100-80gb", "trainer": "arctic", "memory": {"delta_pct": -4}},
      {"gpu": "h100-80gb", "trainer": "engine", "memory": {"delta_pct": 10}, "step_time_s": {"delta_pct": 6}},
      {"gpu": "h100-80gb", "memory": {"delta_pct": 2}, "tokens_per_s": {"delta_pct": 30}, "throughput_consistent": false}]})";
  auto table = MeasuredAccuracy::load({path});
  ASSERT_TRUE(table.ok()) << table.status().message();
  std::string scope;
  const ErrorStats arctic = table->memory_error("h100-80gb", "arctic", &scope);
  EXPECT_EQ(scope, "arctic on h100-80gb");
  EXPECT_EQ(arctic.count, 1);
  EXPECT_EQ(arctic.max_abs_pct, 4.0);
  const ErrorStats hf = table->memory_error("h100-80gb", "hf", &scope);
  EXPECT_EQ(scope, "h100-80gb");
  EXPECT_EQ(hf.count, 3);
  EXPECT_EQ(hf.max_abs_pct, 10.0);
  EXPECT_EQ(table->for_gpu("h100-80gb").speed.count, 1);  // the inconsistent row's speed is left out
  EXPECT_EQ(table->memory_error("b200", "arctic", &scope).count, 0);
  std::ofstream(path) << R"({"rows": [{"gpu": "h100-80gb", "memory": 12.5}]})";
  EXPECT_EQ(MeasuredAccuracy::load({path}).status().message(),
            path + ": key \"rows[0].memory.delta_pct\": missing or not a number (allowed: a number, percent; "
                   "regenerate with scripts/validation-results.sh)");
  std::remove(path.c_str());
}

// The band max-seq and fit print: the signed extremes of the scope's memory error, the longest
// runs' ratios, and the headroom --conservative books (the larger of the asked and the measured).
TEST(MemoryBand, ItsEdgeIsTheLargestUnderPrediction) {
  const std::string path = ::testing::TempDir() + "/band.json";
  std::ofstream(path) << R"({"rows": [
      {"gpu": "h100-80gb", "trainer": "arctic", "memory": {"delta_pct": -5.5}, "max_seq_ratio": 1.13},
      {"gpu": "h100-80gb", "trainer": "arctic", "memory": {"delta_pct": 1.2}, "max_seq_ratio": 1.05},
      {"gpu": "h100-80gb", "trainer": "engine", "memory": {"delta_pct": 0.4}}]})";
  auto table = MeasuredAccuracy::load({path});
  ASSERT_TRUE(table.ok()) << table.status().message();
  PlanSpec plan;
  plan.cluster.gpu = *load_gpu("h100-80gb");
  plan.stack.trainer = "arctic";
  const MemoryBand arctic = memory_band(plan, &*table);
  EXPECT_EQ(arctic.error.max_under_pct, 5.5);
  EXPECT_EQ(arctic.error.max_over_pct, 1.2);
  EXPECT_EQ(arctic.longest_runs.count, 2);
  EXPECT_DOUBLE_EQ(arctic.conservative_headroom(0.0), 0.055);
  EXPECT_DOUBLE_EQ(arctic.conservative_headroom(0.10), 0.10);  // the renter asked for more
  EXPECT_EQ(arctic.words(),
            "peak memory predicted from 5.5% under to 1.2% over the measured (2 runs of arctic on h100-80gb): the "
            "answer may be long by up to 5.5% of GPU memory; max-seq answers 1.05-1.13x the lengths of 2 published "
            "longest runs of arctic on h100-80gb, for their models and knobs (lengths that ran, not edges)");
  plan.stack.trainer = "engine";
  const MemoryBand engine = memory_band(plan, &*table);
  EXPECT_DOUBLE_EQ(engine.conservative_headroom(0.0), 0.0);
  EXPECT_EQ(engine.words(), "peak memory predicted from 0.0% under to 0.4% over the measured (1 run of engine on "
                            "h100-80gb): the answer errs on the short side");
  EXPECT_EQ(engine.edge_words(0.0, "1K tokens"), "");  // nothing to book beyond the prediction
  EXPECT_EQ(arctic.edge_words(0.055, "1K tokens"), "; at its edge (--conservative, 5.5% of GPU memory left free) 1K tokens");
  plan.cluster.gpu = *load_gpu("b200");
  EXPECT_EQ(memory_band(plan, &*table).words(), "not validated: no run measured the peak memory of b200");
  std::ofstream(path) << R"({"rows": [{"gpu": "h100-80gb", "max_seq_ratio": "long"}]})";
  EXPECT_EQ(MeasuredAccuracy::load({path}).status().message(),
            path + ": key \"rows[0].max_seq_ratio\": not a positive number (allowed: a positive number; "
                   "regenerate with scripts/validation-results.sh)");
  std::remove(path.c_str());
}

// --headroom: the share of the device a plan must leave free; the reason says what was asked.
TEST(Headroom, APlanMustLeaveTheShareAskedFree) {
  PlanSpec plan;
  plan.model = *load_model("qwen3-4b");
  plan.cluster = {*load_gpu("h100-80gb"), 4};
  plan.seq_len = 128 * 1024;
  plan.knobs.sp = 4;
  plan.knobs.zero_stage = 3;
  plan.knobs.act_ckpt = ActCkpt::kFull;
  plan.knobs.tiled_loss = true;
  plan.stack = *load_trainer("arctic");
  const costmodel::Estimate free = costmodel::estimate(plan);
  ASSERT_TRUE(free.fits);
  const double used = free.memory.total_bytes() / free.capacity_bytes;
  plan.memory_headroom = (1 - used) + 0.01;  // one point more than it leaves
  const costmodel::Estimate tight = costmodel::estimate(plan);
  EXPECT_FALSE(tight.fits);
  EXPECT_EQ(tight.memory.total_bytes(), free.memory.total_bytes());  // the plan is the same; only the bar moved
  EXPECT_NE(tight.reason().find("% headroom asked"), std::string::npos) << tight.reason();
  plan.memory_headroom = (1 - used) - 0.01;
  EXPECT_TRUE(costmodel::estimate(plan).fits);
}

}  // namespace
}  // namespace spplan
