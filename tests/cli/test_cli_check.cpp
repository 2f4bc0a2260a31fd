// spplan check and spplan calibrate --from-run as a script calls them: exit codes, the one-line
// messages, the JSON, and a kept run cited by the next check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_spplan.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using spplan::cli_test::run_spplan;
using spplan::testing_scratch::ScratchDir;

const std::string kData = std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/check/data";
const std::string kSp2Plan = kData + "/hf_sp2/plan.toml";
const std::string kCpuPlan = std::string(SPPLAN_SOURCE_DIR) + "/configs/plans/tiny-llama-4k-cpu.toml";

TEST(CliCheck, AsPlannedExitsZeroAndNotThePlanExitsOne) {
  const auto clean = run_spplan("check --plan " + kSp2Plan + " " + kData + "/hf_sp2/trainer_state.json");
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("(hf-trainer-state)"), std::string::npos) << clean.out;
  EXPECT_NE(clean.out.find("\nas planned\n"), std::string::npos) << clean.out;
  const auto broken = run_spplan("check --plan " + kSp2Plan + " " + kData + "/hf_sp2_dropped/trainer_state.json");
  EXPECT_EQ(broken.exit_code, 1) << broken.err;
  EXPECT_NE(broken.out.find("NOT THE PLAN not_split: the logged token count is 2.00 x the plan's 256 tokens a step"),
            std::string::npos)
      << broken.out;
  EXPECT_NE(broken.out.find("the run is not the plan\n"), std::string::npos);
}

// A PyTorch memory snapshot (a pickle, the synthetic one of test_torch_snapshot.cpp: its trace's
// allocator peak 21 MiB) read by check and held against the plan beside it.
TEST(CliCheck, ReadsAMemorySnapshot) {
  const std::string snapshot = kData + "/torch_snapshot/traced.pickle";
  const auto r = run_spplan("check --plan " + kSp2Plan + " " + snapshot);
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find(snapshot + " (torch-memory-snapshot)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[allocator peak (memory snapshot: its trace's largest allocated)]"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(run_spplan("check --plan " + kSp2Plan + " " + snapshot + " --json").out);
  EXPECT_EQ(j["formats"], nlohmann::json::array({"torch-memory-snapshot"}));
  EXPECT_EQ(j["measured"]["peak_memory_bytes"], 21 << 20) << j["measured"];
}

TEST(CliCheck, JsonNamesPredictedMeasuredAndFindings) {
  const auto r = run_spplan("check --plan " + kCpuPlan + " " + kData + "/engine_sp1_on_sp2.log.jsonl --json");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["formats"], nlohmann::json::array({"spplan-run-log"}));
  EXPECT_TRUE(j["predicted"].contains("peak_memory_bytes"));
  EXPECT_TRUE(j["measured"].contains("peak_memory_bytes"));
  EXPECT_EQ(j["findings"][0]["id"], "not_split");
  EXPECT_EQ(j["findings"][0]["not_the_plan"], true);
  EXPECT_EQ(j["as_planned"], false);
  EXPECT_TRUE(j["band"]["memory_words"].get<std::string>().rfind("measured error ", 0) == 0) << j["band"];
}

TEST(CliCheck, BadInputIsOneLineAndExitTwo) {
  const ScratchDir dir("cli_check_bad");
  const std::string notes = dir.path() + "/notes.txt";
  std::ofstream(notes) << "loss went down\n";
  const struct {
    std::string args, err;
  } cases[] = {
      {"check --plan " + kSp2Plan,
       "spplan: RUNLOG: missing (required: one or more logs of the run: an HF Trainer or TRL trainer_state.json, "
       "ArcticTraining's metrics JSON Lines, a DeepSpeed log, spplan run --json or --log, "
       "torch.cuda.max_memory_allocated/reserved lines, nvidia-smi --query-gpu=memory.used --format=csv (with its "
       "header), a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot's pickle))\n"},
      {"check " + notes, "spplan: --plan: missing (required: a plan TOML file, the one the run was launched from)\n"},
      {"check --plan " + kSp2Plan + " " + notes,
       "spplan: " + notes + ": not a run log spplan reads (allowed: an HF Trainer or TRL trainer_state.json, "
       "ArcticTraining's metrics JSON Lines, a DeepSpeed log, spplan run --json or --log, "
       "torch.cuda.max_memory_allocated/reserved lines, nvidia-smi --query-gpu=memory.used --format=csv (with its "
       "header), a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot's pickle))\n"},
      {"check --plan " + kSp2Plan + " " + dir.path() + "/absent.json",
       "spplan: " + dir.path() + "/absent.json: cannot open (no such file)\n"},
      {"check --plan " + kSp2Plan + " " + kData + "/hf_sp2/trainer_state.json --runs " + notes,
       "spplan: " + notes + ": not a JSON object ("},
      {"calibrate --from-run --plan " + kSp2Plan + " " + kData + "/hf_sp2/trainer_state.json",
       "spplan: --out: missing (required: your GPU file, e.g. --out my-h100.toml: the run goes to my-h100.runs.json "
       "beside it)\n"},
  };
  for (const auto& c : cases) {
    const auto r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << c.args;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliCheck, AKeptRunIsCitedByTheNextCheck) {
  const ScratchDir dir("cli_check_runs");
  const std::string plan = kData + "/gpu/h100-2026-11-26/q06-16k.plan.toml";
  const std::string log = kData + "/gpu/h100-2026-11-26/q06-16k.json";
  const std::string gpu = dir.path() + "/my-h100.toml";
  const auto kept = run_spplan("calibrate --from-run --plan " + plan + " " + log + " --out " + gpu);
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const std::string runs = dir.path() + "/my-h100.runs.json";
  EXPECT_NE(kept.out.find("added the run to " + runs), std::string::npos) << kept.out;
  EXPECT_NE(kept.out.find("1 of your runs"), std::string::npos) << kept.out;
  EXPECT_FALSE(std::filesystem::exists(gpu));  // the GPU file itself is not written
  const auto cited = run_spplan("check --plan " + plan + " " + log + " --runs " + runs);
  EXPECT_EQ(cited.exit_code, 0) << cited.err;
  EXPECT_NE(cited.out.find("of engine on h100-80gb; 1 of your runs: "), std::string::npos) << cited.out;
}

TEST(CliCheck, TheH100LeasesRunsKeptReproduceItsMeasuredBand) {
  // The six engine runs of the H100 lease of 26 November (validation/gpu/): the README's "allocated
  // memory 0.0%, step time 7.9% with the preset (22.2% at worst, the fp32 run)".
  const ScratchDir dir("cli_check_lease");
  const std::string lease = kData + "/gpu/h100-2026-11-26/";
  const std::string gpu = dir.path() + "/lease-h100.toml";
  for (const char* name : {"q06-16k", "q06-16k-tiled-loss", "q06-32k", "q06-36k-boundary", "q06-37k-boundary", "q06-4k-fp32-gqa"}) {
    const auto r = run_spplan("calibrate --from-run --plan " + lease + name + ".plan.toml " + lease + name + ".json --out " + gpu);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  const auto c = run_spplan("check --plan " + lease + "q06-16k.plan.toml " + lease + "q06-16k.json --runs " +
                            dir.path() + "/lease-h100.runs.json --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto band = nlohmann::json::parse(c.out)["band"];
  EXPECT_EQ(band["your_memory"]["count"], 6);
  EXPECT_LT(band["your_memory"]["max_abs_pct"].get<double>(), 0.05);
  EXPECT_NE(band["speed_words"].get<std::string>().find("6 of your runs: 7.9%, max 22.2%"), std::string::npos) << band;
  // SPPLAN_RUNS: a plan's verdict counts them and cites them.
  const std::string estimate =
      "estimate --model qwen3-0.6b --gpu h100-80gb --gpus 1 --seq 16k --sp 1 --trainer engine --act-ckpt full --precision bf16";
  const auto cited = run_spplan(estimate, "SPPLAN_RUNS=" + dir.path() + "/lease-h100.runs.json");
  ASSERT_EQ(cited.exit_code, 0) << cited.err;
  EXPECT_NE(cited.out.find("; 6 of your runs (SPPLAN_RUNS): measured error 0.0%, max 0.0%\n"), std::string::npos) << cited.out;
  const auto missing = run_spplan(estimate, "SPPLAN_RUNS=" + dir.path() + "/absent.runs.json");
  EXPECT_EQ(missing.exit_code, 0);
  EXPECT_EQ(missing.err, "spplan: warning: SPPLAN_RUNS: " + dir.path() +
                             "/absent.runs.json: cannot open (no such file); your runs are not counted\n");
  EXPECT_EQ(missing.out.find("of your runs"), std::string::npos);
}

TEST(CliCheck, ARunThatIsNotThePlanIsNotKept) {
  const ScratchDir dir("cli_check_not_kept");
  const std::string gpu = dir.path() + "/my-cpu.toml";
  const auto r = run_spplan("calibrate --from-run --plan " + kCpuPlan + " " + kData + "/engine_sp1_on_sp2.log.jsonl --out " + gpu);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "spplan: " + kCpuPlan + ": the run is not the plan (spplan check says why): not added to " + dir.path() +
                       "/my-cpu.runs.json (allowed: runs that check as planned)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/my-cpu.runs.json"));
}

TEST(CliCheck, CalibrateFromRunHasItsOwnHelp) {
  const auto r = run_spplan("calibrate --from-run --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: spplan calibrate --from-run --plan P.toml RUNLOG... --out GPU.toml [--json]\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("exit codes: 0 kept, 1 the run is not the plan (not kept), 2 bad input"), std::string::npos);
}

TEST(CliCheck, TheRunsFileIsNeverOneOfTheInputs) {
  const ScratchDir dir("cli_check_inputs");
  const std::string log = dir.path() + "/x.runs.json";
  std::filesystem::copy_file(kData + "/gpu/h100-2026-11-26/q06-16k.json", log);
  const auto r = run_spplan("calibrate --from-run --plan " + kData + "/gpu/h100-2026-11-26/q06-16k.plan.toml " + log +
                            " --out " + dir.path() + "/x.toml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out's runs file"), std::string::npos) << r.err;
  std::ifstream in(log);
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(in), {}).find("\"losses\""), std::string::npos);  // intact
}

}  // namespace
