// check_run's findings, each from the numbers that make it, on plans of the configs folder.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/check/run_check.hpp"
#include "planner/config/loaders.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::check {
namespace {

PlanSpec plan_at(const std::string& path) {
  auto plan = load_plan(path);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

std::vector<std::string> ids(const CheckReport& r) {
  std::vector<std::string> out;
  for (const Finding& f : r.findings) out.push_back(f.id);
  return out;
}

double allocated(const PlanSpec& plan) {
  const costmodel::Estimate e = costmodel::estimate(plan);
  return e.memory.total_bytes() - e.memory.overhead_bytes;
}

TEST(RunCheck, EachFindingFromTheNumbersThatMakeIt) {
  // Ulysses sp 4 at 128K tokens on four H100s, where the split decides the memory; a ring cp 2 beside it.
  const PlanSpec sp2 = plan_at(std::string(SPPLAN_SOURCE_DIR) + "/configs/plans/qwen3-4b-128k-4xh100.toml");
  const PlanSpec cp2 = plan_at(std::string(SPPLAN_TEST_DATA_DIR) + "/cp2_plan.toml");
  PlanSpec unsplit = sp2;
  unsplit.knobs.sp = 1;
  const costmodel::Estimate e = costmodel::estimate(sp2);
  const double planned = allocated(sp2), whole = allocated(unsplit);
  ASSERT_GT(whole, 1.25 * planned);  // the split matters at this length, so memory can tell
  struct Case {
    const char* what;
    const PlanSpec* plan;
    RunMeasurements run;
    std::vector<std::string> findings;
    bool as_planned;
  };
  auto with = [](auto set) {
    RunMeasurements r;
    set(r);
    return r;
  };
  const Case cases[] = {
      {"memory as planned", &sp2, with([&](auto& r) { r.peak_allocated_bytes = planned * 1.02; }), {}, true},
      {"memory of the unsplit plan", &sp2, with([&](auto& r) { r.peak_allocated_bytes = whole; }), {"not_split"}, false},
      {"memory above the band, not the unsplit plan's", &sp2,
       with([&](auto& r) { r.peak_allocated_bytes = planned * 1.2; }), {"memory_above_band"}, true},
      {"the run reports sp 1", &sp2, with([](auto& r) { r.sp = 1; r.cp = 1; }), {"not_split"}, false},
      {"the run reports sp 2", &sp2, with([](auto& r) { r.sp = 2; r.cp = 1; }), {"layout_differs"}, false},
      {"the run reports the plan's sp 4", &sp2, with([](auto& r) { r.sp = 4; r.cp = 1; }), {}, true},
      {"tokens/s past the GPUs' peak", &sp2, with([&](auto& r) { r.tokens_per_s = 1.5 * e.tokens_per_s / e.mfu; }),
       {"above_peak"}, false},
      {"TFLOPS past the GPU's peak", &sp2, with([](auto& r) { r.tflops_per_gpu = 2000; }), {"above_peak"}, false},
      {"sp x the plan's tokens", &sp2,
       with([&](auto& r) { r.tokens_seen = static_cast<double>(sp2.knobs.sp) * 10 * e.tokens_per_step; r.steps = 10; }),
       {"not_split"}, false},
      {"the plan's tokens", &sp2, with([&](auto& r) { r.tokens_seen = 10 * e.tokens_per_step; r.steps = 10; }), {}, true},
      {"cp x the plan's tokens: counted per rank", &cp2,
       with([&](auto& r) { r.tokens_seen = 2 * 4 * costmodel::estimate(cp2).tokens_per_step; r.steps = 4; }),
       {"tokens_times_ranks"}, true},
      {"eval loss cp x the train loss", &cp2, with([](auto& r) { r.train_loss = 2.0; r.eval_loss = 4.1; }),
       {"eval_loss_times_cp"}, true},
      {"eval loss near the train loss", &cp2, with([](auto& r) { r.train_loss = 2.0; r.eval_loss = 2.1; }), {}, true},
      {"steps 3 x slower", &sp2, with([&](auto& r) { r.step_times_s = {9, 3 * e.time.step_time_s}; }),
       {"step_time_far"}, true},
      {"steps 3 x faster", &sp2, with([&](auto& r) { r.step_times_s = {9, e.time.step_time_s / 3}; }),
       {"step_time_far"}, true},
  };
  for (const Case& c : cases) {
    const CheckReport report = check_run(*c.plan, c.run, Band{});
    EXPECT_EQ(ids(report), c.findings) << c.what;
    EXPECT_EQ(report.as_planned(), c.as_planned) << c.what;
  }
}

TEST(RunCheck, AStepFarFromThePlanNamesTheLikelyTerm) {
  const PlanSpec sp2 = plan_at(std::string(SPPLAN_TEST_DATA_DIR) + "/hf_sp2/plan.toml");
  RunMeasurements run;
  run.step_times_s = {1, 1};  // far above the ~ms step the plan predicts
  const CheckReport report = check_run(sp2, run, Band{});
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_NE(report.findings[0].cause.find("exposed Ulysses all-to-all"), std::string::npos) << report.findings[0].cause;
  ASSERT_EQ(report.comparisons.size(), 1u);
  EXPECT_EQ(report.comparisons[0].quantity, "step_time");
}

// The compared peak says what measured it: a snapshot read alone measured it from its own records.
TEST(RunCheck, TheMemoryComparisonSaysWhatMeasuredIt) {
  const PlanSpec sp2 = plan_at(std::string(SPPLAN_TEST_DATA_DIR) + "/hf_sp2/plan.toml");
  RunMeasurements run;
  run.peak_allocated_bytes = allocated(sp2);
  const struct {
    std::vector<std::string> formats;
    bool reserved_only;
    const char* words;
  } cases[] = {
      {{"torch-memory-lines"}, false, "allocator peak (max_memory_allocated)"},
      {{"torch-memory-snapshot"}, false, "allocator peak (memory snapshot: its trace's largest allocated)"},
      {{"torch-memory-snapshot", "nvidia-smi-csv"}, false, "allocator peak (max_memory_allocated)"},
      {{"torch-memory-snapshot"}, true, "allocator reserved (memory snapshot: its segments at their largest)"},
      {{"deepspeed-log"}, true, "allocator reserved (max_memory_reserved)"},
  };
  for (const auto& x : cases) {
    RunMeasurements r = run;
    r.formats = x.formats;
    if (x.reserved_only) {
      r.peak_allocated_bytes.reset();
      r.peak_reserved_bytes = allocated(sp2);
    }
    const CheckReport report = check_run(sp2, r, Band{});
    ASSERT_EQ(report.comparisons.size(), 1u) << x.words;
    EXPECT_EQ(report.comparisons[0].measured_as, x.words);
  }
}

TEST(RunCheck, TheBandSaysHowManyRunsAndHowManyAreYours) {
  ErrorStats all{29, 3.84, 14.8, 14.8, 3.1}, yours{};
  EXPECT_EQ(band_words(all, yours, "h100-80gb"), "measured error 3.8%, max 14.8% (29 runs of h100-80gb)");
  yours = {3, 2.2, 4.0, 4.0, 0};
  EXPECT_EQ(band_words(all, yours, "h100-80gb"), "measured error 3.8%, max 14.8% (29 runs of h100-80gb; 3 of your runs: 2.2%, max 4.0%)");
  EXPECT_EQ(band_words({}, {}, "hf on b200"), "not validated (no run of hf on b200)");
}

}  // namespace
}  // namespace spplan::check
