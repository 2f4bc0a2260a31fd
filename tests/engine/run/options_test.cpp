// `run` flags (engine/run/options.hpp): engine defaults, knob overrides of a plan, refusals.
#include "engine/run/options.hpp"

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/search/search.hpp"
#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

Result<RunOptions> parse(std::vector<std::string> words) {
  std::vector<const char*> argv{"spplan-engine", "run"};
  for (const auto& w : words) argv.push_back(w.c_str());
  return parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
}

TEST(EngineOptions, FlagsGetTheEngineDefaults) {
  auto o = parse({"--model", "tiny-llama", "--seq", "4k", "--sp", "2", "--nproc", "2"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->plan.seq_len, 4096);
  EXPECT_EQ(o->plan.knobs.zero_stage, 0);
  EXPECT_EQ(o->plan.knobs.act_ckpt, ActCkpt::kNone);
  EXPECT_EQ(o->plan.knobs.precision, Precision::kFp32);
  EXPECT_EQ(o->steps, 5);
  EXPECT_FALSE(o->json);
  EXPECT_TRUE(check_run_options(&*o, 2).is_ok());
  EXPECT_EQ(o->plan.cluster.num_gpus, 2);
}

TEST(EngineOptions, PlanFileKnobsAndFlagOverrides) {
  const std::string plan = std::string(SPPLAN_CONFIGS_DIR) + "/plans/tiny-llama-4k-cpu.toml";
  auto o = parse({"--plan", plan, "--nproc", "2", "--act-ckpt", "full"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->plan.knobs.sp, 2);
  EXPECT_EQ(o->plan.knobs.act_ckpt, ActCkpt::kFull);
  RunOptions four = *o;  // the plan is priced for 2 GPUs: 4 ranks is another plan (another dp)
  EXPECT_EQ(check_run_options(&four, 4).message(),
            "--nproc: value 4 differs from " + plan + ": key \"cluster.num_gpus\" 2 (allowed: 2, or a plan made for 4 "
            "GPUs: spplan plan --gpus 4)");
  EXPECT_TRUE(check_run_options(&*o, 2).is_ok());
  EXPECT_EQ(o->where("act_ckpt"), "--act-ckpt");
  EXPECT_EQ(o->where("zero_stage"), plan + ": key \"knobs.zero_stage\"");
}

// A plan made for a corpus keeps its documents, but a run trains on its --data (or random tokens):
// its prediction prices what it runs, so the corpus's documents are dropped. (This plan's SDPA
// refuses packed documents on its trainer, so the corpus here is one document a sequence.)
TEST(EngineOptions, APlanFilesDocumentsAreNotTheRunsData) {
  const std::string base = std::string(SPPLAN_CONFIGS_DIR) + "/plans/tiny-llama-4k-cpu.toml";
  std::ifstream in(base);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string plan = testing::fresh_dir("options_documents") + "/plan.toml";
  std::ofstream(plan) << text << "\n[documents]\npacked = false\nsequences = 4\npieces = [[1000, 3], [4096, 1]]\n";
  auto o = parse({"--plan", plan, "--nproc", "2"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->plan.documents.empty());
  EXPECT_FALSE(o->plan.packed_documents);
}

TEST(EngineOptions, BucketedBf16GradientReductionIsAccepted) {
  auto o = parse({"--model", "tiny-llama", "--seq", "1024", "--sp", "2", "--nproc", "2", "--sp-comm-dtype", "bf16",
                  "--reduce-bucket", "1e6"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(check_run_options(&*o, 2).is_ok());
}

// Every knob set the planner searches for `--trainer engine` (the engine's record) is one `spplan
// run --plan` accepts: the record refuses what the engine does not run, so a plan it prices is one
// it can launch. Fixed cases: dense and GQA models, one node and two, short and long.
TEST(EngineOptions, RunAcceptsEverySearchedEnginePlan) {
  struct Case {
    const char* model;
    int64_t gpus, seq;
  };
  const std::string dir = testing::fresh_dir("engine-plans");
  int checked = 0;
  for (const Case& c : {Case{"tiny-llama", 2, 4096}, Case{"llama-3.1-8b", 8, 1 << 20}, Case{"qwen3-4b", 16, 1 << 18}}) {
    PlanSpec base;
    base.model = *load_model(c.model);
    base.cluster = {*load_gpu("h100-80gb"), c.gpus};
    base.seq_len = c.seq;
    base.stack = *load_trainer("engine");
    for (const Knobs& knobs : search::candidate_knobs(base)) {
      const std::string path = dir + "/plan.toml";
      std::ofstream(path) << plan_to_toml(search::with_knobs(base, knobs));
      auto o = parse({"--plan", path, "--nproc", std::to_string(c.gpus)});
      ASSERT_TRUE(o.ok()) << o.status().message() << "\n" << plan_to_toml(search::with_knobs(base, knobs));
      const Status checked_options = check_run_options(&*o, c.gpus);
      ASSERT_TRUE(checked_options.is_ok()) << checked_options.message() << "\n" << plan_to_toml(search::with_knobs(base, knobs));
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace spplan::engine
