// The fixtures of real runs (make_fixtures.py says how each was made): every run launched as its
// plan says checks as planned, every run broken on purpose is caught as "not split".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "planner/check/run_check.hpp"
#include "planner/check/run_log.hpp"
#include "planner/config/loaders.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::check {
namespace {

using spplan::testing_scratch::ScratchDir;

const std::string kData = SPPLAN_TEST_DATA_DIR;
const std::string kPlans = std::string(SPPLAN_SOURCE_DIR) + "/configs/plans";

struct Checked {
  CheckReport report;
  std::vector<std::string> ids;
};

Checked check(const std::string& plan_path, const std::string& log) {
  auto plan = load_plan(plan_path);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  auto run = read_run_log(log);
  EXPECT_TRUE(run.ok()) << run.status().message();
  if (!plan.ok() || !run.ok()) return {};
  Checked c{check_run(*plan, *run, Band{}), {}};
  for (const Finding& f : c.report.findings) c.ids.push_back(f.id);
  return c;
}

TEST(RealRuns, RunsAsPlannedCheckClean) {
  const struct {
    std::string plan, log;
  } cases[] = {
      {kPlans + "/tiny-llama-4k-cpu.toml", kData + "/engine_sp2.json"},
      {kPlans + "/tiny-llama-4k-cpu.toml", kData + "/engine_sp2.log.jsonl"},
      {kData + "/hf_sp2/plan.toml", kData + "/hf_sp2/trainer_state.json"},
      {kData + "/hf_sp2/plan.toml", kData + "/hf_sp2/deepspeed.log"},
      {kData + "/arctic_sp2/plan.toml", kData + "/arctic_sp2/metrics.jsonl"},
      {kData + "/ring_cp2_cpu.toml", kData + "/engine_cp2.json"},
      {kData + "/gpu/h100-2026-11-26/q06-16k.plan.toml", kData + "/gpu/h100-2026-11-26/q06-16k.json"},
      {kData + "/gpu/h200_engine_q06_16k.plan.toml", kData + "/gpu/h200_engine_q06_16k.memory.log"},
      {kData + "/gpu/h200_zero2_q06_16k.plan.toml", kData + "/gpu/h200_zero2_q06_16k.deepspeed.log"},
  };
  for (const auto& c : cases) {
    const Checked checked = check(c.plan, c.log);
    EXPECT_TRUE(checked.report.as_planned()) << c.log << ": " << ::testing::PrintToString(checked.ids);
    EXPECT_FALSE(checked.report.comparisons.empty()) << c.log;
  }
}

TEST(RealRuns, TheGpuRunsPeakMemoryIsInsideTheMeasuredBand) {
  for (const std::string name : {"h100-2026-11-26/q06-16k", "h200_engine_q06_16k"}) {
    const std::string log = kData + "/gpu/" + name + (name[0] == 'h' && name[1] == '1' ? ".json" : ".memory.log");
    const Checked c = check(kData + "/gpu/" + name + ".plan.toml", log);
    ASSERT_FALSE(c.report.comparisons.empty()) << name;
    EXPECT_EQ(c.report.comparisons[0].quantity, "peak_memory");
    EXPECT_LT(std::abs(c.report.comparisons[0].error_pct()), 1.0) << name;
  }
}

TEST(RealRuns, RunsBrokenOnPurposeAreNotSplit) {
  const struct {
    std::string plan, log;
  } cases[] = {
      // The HF Trainer launched from the accelerate export with its parallelism_config removed.
      {kData + "/hf_sp2/plan.toml", kData + "/hf_sp2_dropped/trainer_state.json"},
      // spplan run of the same model and GPUs with --sp 1: against the Ulysses plan, and against the
      // ring plan (a ring launched without cp).
      {kPlans + "/tiny-llama-4k-cpu.toml", kData + "/engine_sp1_on_sp2.log.jsonl"},
      {kData + "/ring_cp2_cpu.toml", kData + "/engine_sp1_on_sp2.log.jsonl"},
  };
  for (const auto& c : cases) {
    const Checked checked = check(c.plan, c.log);
    EXPECT_FALSE(checked.report.as_planned()) << c.log;
    EXPECT_THAT(checked.ids, ::testing::Contains("not_split")) << c.log;
  }
}

TEST(RealRuns, TheLogsOfOneRunAreReadTogether) {
  // The dropped launch's DeepSpeed log (its step times) and its trainer_state.json (its tokens).
  auto plan = load_plan(kData + "/hf_sp2/plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  RunMeasurements run;
  for (const char* log : {"/hf_sp2_dropped/deepspeed.log", "/hf_sp2_dropped/trainer_state.json"}) {
    auto one = read_run_log(kData + log);
    ASSERT_TRUE(one.ok()) << one.status().message();
    merge_into(&run, *one);
  }
  EXPECT_EQ(run.formats, (std::vector<std::string>{"deepspeed-log", "hf-trainer-state"}));
  EXPECT_EQ(run.step_times_s.size(), 2u);  // DeepSpeed's two steps, not the Trainer's mean
  EXPECT_TRUE(run.tokens_seen.has_value());
  EXPECT_FALSE(check_run(*plan, run, Band{}).as_planned());
}

TEST(RealRuns, AKilledRunsStepLinesAloneShowTheUnsplitMemory) {
  // Without the summary line (a run killed before it ends) no line says sp: the memory does.
  const ScratchDir dir("real_runs_killed");
  std::ifstream in(kData + "/engine_sp1_on_sp2.log.jsonl");
  std::ostringstream steps;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"summary\"") == std::string::npos) steps << line << "\n";
  }
  const std::string log = dir.path() + "/killed.log.jsonl";
  std::ofstream(log) << steps.str();
  const Checked c = check(kPlans + "/tiny-llama-4k-cpu.toml", log);
  ASSERT_THAT(c.ids, ::testing::Contains("not_split"));
  EXPECT_FALSE(c.report.as_planned());
  EXPECT_NE(c.report.findings[0].words.find("predicted at sp x cp = 1"), std::string::npos) << c.report.findings[0].words;
}

}  // namespace
}  // namespace spplan::check
