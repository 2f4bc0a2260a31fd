// Watching a run for hours: the --log JSON lines, the lines on stderr (data passes, resume,
// checkpoint, eval, ETA, MFU), a clean stop on SIGTERM, resume refusing other data, and the
// Hugging Face export after --resume. Real processes of tiny-llama at seq 256.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

namespace fs = std::filesystem;

// n little-endian uint16 ids below 4096 (tiny-llama's vocabulary) from a fixed recurrence.
std::string token_file(const std::string& dir, const std::string& name, int n, uint32_t seed) {
  std::string bytes;
  uint32_t x = seed;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const uint32_t id = (x >> 8) % 4096;
    bytes += std::string{static_cast<char>(id & 0xff), static_cast<char>(id >> 8)};
  }
  return write_file(dir, name, bytes);
}

std::vector<std::string> tiny(int steps, std::vector<std::string> more = {}) {
  std::vector<std::string> a{"run", "--model", "tiny-llama", "--seq", "256", "--sp", "1", "--nproc", "1",
                             "--seed", "3", "--steps", std::to_string(steps)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<nlohmann::json> log_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(EngineWatch, LogHasAStepLinePerStepEvalsAndASummaryWithTheRunsSettings) {
  const std::string dir = fresh_dir("watch_log");
  const std::string data = token_file(dir, "train.u16.bin", 600, 1);  // 4 steps x 257 tokens: passes > 1
  const std::string eval = token_file(dir, "eval.u16.bin", 600, 2);
  const RunResult r = run_engine(tiny(4, {"--data", data, "--eos-id", "7", "--log", dir + "/log.jsonl", "--eval-data",
                                          eval, "--eval-every", "2", "--save", dir + "/ckpt", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--data holds 600 tokens; 4 steps of 1 sequences of 256 read it 1.71 times over"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ETA "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("eval step 2/4  eval loss "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("saved checkpoint of step 4 to " + dir + "/ckpt"), std::string::npos) << r.err;
  const std::vector<nlohmann::json> lines = log_lines(dir + "/log.jsonl");
  std::vector<std::string> events;
  for (const auto& l : lines) events.push_back(l["event"].get<std::string>() + std::to_string(l.value("step", 0)));
  EXPECT_EQ(events, (std::vector<std::string>{"step1", "step2", "eval2", "step3", "step4", "eval4", "checkpoint4", "summary0"}));
  const nlohmann::json report = json_of(r);
  EXPECT_EQ(lines[0]["loss"], report["losses"][0]);  // the same numbers as the --json object
  EXPECT_EQ(lines[1]["learning_rate"], report["lrs"][1]);
  EXPECT_GT(lines[2]["eval_loss"].get<double>(), 0.0);
  EXPECT_NEAR(lines[4]["epoch"].get<double>(), 4 * 256 / 600.0, 1e-12);
  const nlohmann::json& settings = lines.back()["settings"];
  EXPECT_EQ(settings["precision"], "fp32");
  EXPECT_EQ(settings["zero_stage"], 0);
  EXPECT_EQ(settings["cp"], 1);  // every knob, as the CLI's --json plans show them (knobs_json)
  EXPECT_EQ(settings["micro_batch"], 1);
  EXPECT_EQ(settings["seed"], 3);
  EXPECT_EQ(settings["eos_id"], 7);
  EXPECT_EQ(settings["data"], nlohmann::json::array({data}));
  EXPECT_EQ(settings["optimizer"]["betas"], nlohmann::json::array({0.9, 0.95}));
  EXPECT_FALSE(settings["commit"].get<std::string>().empty());
  EXPECT_EQ(report["settings"], settings);
}

// --eval-data under ring attention: the held-out loss reads each rank's zigzag tokens at their
// global positions, so it equals the one-rank evaluation.
TEST(EngineWatch, RingEvaluatesTheSameLossAsOneRank) {
  const std::string dir = fresh_dir("watch_eval_ring");
  const std::string data = token_file(dir, "train.u16.bin", 3000, 1), eval = token_file(dir, "eval.u16.bin", 3000, 2);
  auto eval_loss = [&](const std::string& name, std::vector<std::string> layout) {
    std::vector<std::string> a{"run", "--model", "tiny-llama", "--seq", "256", "--seed", "3", "--steps", "1", "--data",
                               data, "--eval-data", eval, "--eval-every", "1", "--log", dir + "/" + name + ".jsonl"};
    a.insert(a.end(), layout.begin(), layout.end());
    const RunResult r = run_engine(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const nlohmann::json& l : log_lines(dir + "/" + name + ".jsonl")) {
      if (l["event"] == "eval") return l["eval_loss"].get<double>();
    }
    return -1.0;
  };
  const double one = eval_loss("one", {"--sp", "1", "--nproc", "1"});
  const double ring = eval_loss("ring", {"--sp", "1", "--cp", "2", "--nproc", "2"});
  EXPECT_GT(one, 0.0);
  // Measured: 1.1e-7 relative; RoPE at contiguous instead of zigzag positions moves it by 4.6e-5.
  EXPECT_NEAR(ring, one, 2e-6 * one);
}

// Evaluating (forward only, ZeRO-3 gathers included) leaves training exactly as it was.
TEST(EngineWatch, EvaluationDoesNotChangeTheTrainingLosses) {
  const std::string dir = fresh_dir("watch_eval_zero3");
  const std::string data = token_file(dir, "train.u16.bin", 3000, 1), eval = token_file(dir, "eval.u16.bin", 3000, 2);
  const std::vector<std::string> zero3{"--nproc", "2", "--zero", "3", "--act-ckpt", "full", "--data", data, "--json"};
  auto args = [&](std::vector<std::string> more) {
    std::vector<std::string> a{"run", "--model", "tiny-llama", "--seq", "256", "--sp", "1", "--seed", "3", "--steps", "3"};
    a.insert(a.end(), zero3.begin(), zero3.end());
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const auto plain = losses_of(json_of(run_engine(args({}))));
  const RunResult with_eval = run_engine(args({"--eval-data", eval, "--eval-every", "1"}));
  ASSERT_EQ(with_eval.exit_code, 0) << with_eval.err;
  EXPECT_EQ(losses_of(json_of(with_eval)), plain);
  EXPECT_NE(with_eval.err.find("eval step 3/3  eval loss "), std::string::npos) << with_eval.err;
}

TEST(EngineWatch, ResumeRefusesOtherDataOrEosIdAndSaysWhereItResumes) {
  const std::string dir = fresh_dir("watch_resume");
  const std::string a = token_file(dir, "a.u16.bin", 2000, 1), b = token_file(dir, "b.u16.bin", 2000, 5);
  ASSERT_EQ(run_engine(tiny(2, {"--data", a, "--eos-id", "7", "--save", dir + "/ckpt"})).exit_code, 0);
  const RunResult other = run_engine(tiny(4, {"--data", b, "--eos-id", "7", "--resume", dir + "/ckpt"}));
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--data: \"b.u16.bin 2000 tokens "), std::string::npos) << other.err;
  const RunResult no_eos = run_engine(tiny(4, {"--data", a, "--resume", dir + "/ckpt"}));
  EXPECT_EQ(no_eos.exit_code, 2);
  EXPECT_NE(no_eos.err.find("--eos-id: value none differs from the 7 that"), std::string::npos) << no_eos.err;
  const RunResult same = run_engine(tiny(4, {"--data", a, "--eos-id", "7", "--resume", dir + "/ckpt"}));
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.err.find("resumed from " + dir + "/ckpt/ckpt-000002 at step 2 of 4"), std::string::npos) << same.err;
}

// SIGTERM in the middle: the step finishes, a checkpoint is saved, the --json summary is printed and
// the exit code is 143. The signal is sent once the log shows a step (not after a guessed delay).
TEST(EngineWatch, SigtermFinishesTheStepSavesAndPrintsTheSummary) {
  const std::string dir = fresh_dir("watch_sigterm");
  std::string cmd = std::string("OMP_NUM_THREADS=1 ") + SPPLAN_ENGINE_BIN;
  for (const std::string& a : tiny(100000, {"--save", dir + "/ckpt", "--log", dir + "/log.jsonl", "--json"})) cmd += " " + a;
  cmd += " > " + dir + "/out.json 2> " + dir + "/err.txt & pid=$!; ";
  cmd += "while [ ! -s " + dir + "/log.jsonl ]; do sleep 0.1; done; kill -TERM $pid; wait $pid; echo \"exit $?\"";
  const RunResult r = run_shell(cmd, 120);
  EXPECT_NE(r.out.find("exit 143"), std::string::npos) << r.out;
  std::ifstream out(dir + "/out.json");
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["stopped_by_signal"], 15);
  const int64_t last = j["last_step"].get<int64_t>();
  EXPECT_GE(last, 1);
  EXPECT_LT(last, 100000);
  EXPECT_TRUE(fs::exists(dir + "/ckpt/LATEST"));
  const std::vector<nlohmann::json> lines = log_lines(dir + "/log.jsonl");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["event"], "summary");
  std::ifstream err(dir + "/err.txt");
  std::stringstream text;
  text << err.rdbuf();
  EXPECT_NE(text.str().find("stopped by signal 15"), std::string::npos) << text.str();
}

// With the launcher (--nproc 2): the launcher passes the signal on and returns 143 too.
TEST(EngineWatch, SigtermToTheLauncherStopsEveryRankAfterTheSameStep) {
  const std::string dir = fresh_dir("watch_sigterm2");
  const std::vector<std::string> args{"run", "--model", "tiny-llama", "--seq", "256", "--sp", "2", "--nproc", "2",
                                      "--steps", "100000", "--log", dir + "/log.jsonl", "--json"};
  std::string cmd = SPPLAN_ENGINE_BIN;
  for (const std::string& a : args) cmd += " " + a;
  cmd += " > " + dir + "/out.json 2>/dev/null & pid=$!; ";
  cmd += "while [ ! -s " + dir + "/log.jsonl ]; do sleep 0.1; done; kill -TERM $pid; wait $pid; echo \"exit $?\"";
  const RunResult r = run_shell("OMP_NUM_THREADS=1 " + cmd, 120);
  EXPECT_NE(r.out.find("exit 143"), std::string::npos) << r.out;
  std::ifstream out(dir + "/out.json");
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["stopped_by_signal"], 15);
}

// --export-hf after --resume: config.json as --init-from gave it (only dtype changed), the
// generation and tokenizer files carried through the checkpoint, bf16 weights; without --steps
// it only converts.
TEST(EngineWatch, ExportAfterResumeKeepsTheOriginalFolderAndConvertsOnly) {
  const std::string dir = fresh_dir("watch_export");
  ASSERT_EQ(run_engine(tiny(1, {"--export-hf", dir + "/base"})).exit_code, 0);  // a folder to start from
  std::ifstream in(dir + "/base/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["bos_token_id"] = 1;
  config["eos_token_id"] = 2;
  config["max_position_embeddings"] = 4096;
  std::ofstream(dir + "/base/config.json", std::ios::trunc) << config.dump(2);
  write_file(dir + "/base", "generation_config.json", "{\"eos_token_id\": 2}");
  write_file(dir + "/base", "tokenizer.json", "{\"model\": {}}");
  ASSERT_EQ(run_engine(tiny(2, {"--init-from", dir + "/base", "--save", dir + "/ckpt"})).exit_code, 0);
  fs::remove_all(dir + "/base");  // resuming needs only the checkpoint
  const RunResult convert = run_engine({"run", "--model", "tiny-llama", "--seq", "256", "--sp", "1", "--nproc", "1",
                                        "--resume", dir + "/ckpt", "--export-hf", dir + "/out", "--export-dtype", "bf16"});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  EXPECT_EQ(convert.err.find("step 3/"), std::string::npos) << "trained a step: " << convert.err;
  EXPECT_NE(convert.err.find("wrote the weights of step 2 to " + dir + "/out (bf16; 3 Hugging Face file(s) carried)"),
            std::string::npos) << convert.err;
  std::ifstream out_config(dir + "/out/config.json");
  nlohmann::json written = nlohmann::json::parse(out_config);
  EXPECT_EQ(written["bos_token_id"], 1);
  EXPECT_EQ(written["eos_token_id"], 2);
  EXPECT_EQ(written["max_position_embeddings"], 4096);
  EXPECT_EQ(written["dtype"], "bfloat16");
  config.erase("torch_dtype");
  config["dtype"] = "bfloat16";
  EXPECT_EQ(written, config);
  std::ifstream gen(dir + "/out/generation_config.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(gen), {}), "{\"eos_token_id\": 2}");
  EXPECT_TRUE(fs::exists(dir + "/out/tokenizer.json"));
  std::ifstream st(dir + "/out/model.safetensors", std::ios::binary);
  const std::string head(std::istreambuf_iterator<char>(st), {});
  EXPECT_NE(head.find("\"BF16\""), std::string::npos);
  EXPECT_EQ(head.find("\"F32\""), std::string::npos);
}

// Priced on an H100 (--gpu), a CPU run's progress line shows an MFU; other betas change the run.
TEST(EngineWatch, MfuWithAKnownPeakAndAdamBetasTakeEffect) {
  const RunResult h100 = run_engine(tiny(2, {"--gpu", "h100-80gb", "--json"}));
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_NE(h100.err.find("  MFU "), std::string::npos) << h100.err;
  EXPECT_TRUE(json_of(h100)["mfu"].is_number());
  const auto plain = losses_of(json_of(run_engine(tiny(3, {"--json"}))));
  const auto betas = losses_of(json_of(run_engine(tiny(3, {"--adam-beta1", "0.5", "--adam-beta2", "0.9", "--json"}))));
  ASSERT_EQ(plain.size(), 3u);
  ASSERT_EQ(betas.size(), 3u);
  EXPECT_EQ(plain[0], betas[0]);  // the first loss is before any step
  EXPECT_NE(plain[2], betas[2]);
}

}  // namespace
}  // namespace spplan::engine::testing
