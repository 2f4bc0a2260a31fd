// A run never destroys a user's files or silently trains something else. Real processes
// of tiny-llama: every input/output pair refused with the input byte-for-byte unchanged, outputs
// checked before the first step, a kill during --save or --export-hf leaving the previous checkpoint
// and model whole, and a resume continuing the whole run (schedule, weight-decay groups, data
// position at another --seq, the --log without duplicate steps, --resume-or-init).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

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

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every file under `dir` (or `dir` itself when it is a file) with its bytes.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  if (fs::is_regular_file(dir)) return {{dir, bytes_of(dir)}};
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().string()] = bytes_of(e.path().string());
  }
  return files;
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

std::vector<double> numbers(const nlohmann::json& j, const char* key) {
  std::vector<double> v;
  for (const auto& x : j[key]) v.push_back(x.get<double>());
  return v;
}

// The fixture every refusal case reads: a corpus, a held-out file, a base model folder (exported by
// a run), a checkpoint folder, and links to the corpus.
struct Inputs {
  std::string dir, data, eval, base, ckpt;
};
const Inputs& inputs() {
  static const Inputs in = [] {
    Inputs i;
    i.dir = fresh_dir("safety_inputs");
    i.data = token_file(i.dir, "train.u16.bin", 3000, 1);
    i.eval = token_file(i.dir, "eval.u16.bin", 600, 2);
    i.base = i.dir + "/base";
    i.ckpt = i.dir + "/ckpt";
    EXPECT_EQ(run_engine(tiny(1, {"--export-hf", i.base})).exit_code, 0);
    EXPECT_EQ(run_engine(tiny(1, {"--data", i.data, "--save", i.ckpt})).exit_code, 0);
    fs::create_symlink(i.data, i.dir + "/link.u16.bin");
    fs::create_hard_link(i.data, i.dir + "/hard.u16.bin");
    return i;
  }();
  return in;
}

// Each output onto (or into, or around) an input: exit 2 before anything is opened for writing, one
// line naming the output flag and the input, and every input byte-for-byte as it was.
TEST(EngineSafety, NoInputIsEverAnOutput) {
  const Inputs& in = inputs();
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"--data", in.data, "--log", in.data}, "--log: " + in.data + " is the --data file"},
      {{"--data", in.data, "--log", in.dir + "/link.u16.bin"}, "is the --data file"},
      {{"--data", in.data, "--log", in.dir + "/hard.u16.bin"}, "is the --data file"},
      {{"--data", in.data, "--log", in.dir + "/../" + fs::path(in.dir).filename().string() + "/train.u16.bin"},
       "is the --data file"},
      {{"--data", in.data, "--eval-data", in.eval, "--log", in.eval}, "is the --eval-data file"},
      {{"--init-from", in.base, "--export-hf", in.base}, "--export-hf: " + in.base + " is the --init-from folder"},
      {{"--init-from", in.base, "--save", in.base + "/ckpt"}, "lies inside the --init-from folder"},
      {{"--init-from", in.base, "--log", in.base + "/config.json"}, "lies inside the --init-from folder"},
      {{"--data", in.data, "--resume", in.ckpt, "--export-hf", in.ckpt}, "is the --resume folder"},
      {{"--data", in.data, "--resume", in.ckpt, "--log", in.ckpt + "/LATEST"}, "lies inside the --resume folder"},
      {{"--data", in.data, "--export-hf", in.dir}, "--export-hf: " + in.dir + " holds the --data file"},
      {{"--data", in.data, "--export-hf", in.dir + "/out", "--log", in.dir + "/out/run.jsonl"},
       "--log: " + in.dir + "/out/run.jsonl lies inside the --export-hf folder"},
  };
  const auto before = snapshot(in.dir);
  for (const auto& c : cases) {
    const RunResult r = run_engine(tiny(2, c.args), {}, 60);
    EXPECT_EQ(r.exit_code, 2) << c.expected << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << "expected: " << c.expected << "\nfound: " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_EQ(r.err.find("step 1/"), std::string::npos) << "trained: " << r.err;
  }
  EXPECT_EQ(snapshot(in.dir), before) << "an input changed";
}

// A bad output is refused before the first step, not after the last (once, --save onto a file
// trained every step, then failed).
TEST(EngineSafety, OutputsAreCheckedBeforeTheFirstStep) {
  const std::string dir = fresh_dir("safety_outputs");
  const std::string afile = write_file(dir, "afile", "keep");
  write_file(dir + "/mine", "notes.txt", "my notes");
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"--save", afile}, "--save: " + afile + ": a file (allowed: a folder, new or existing)"},
      {{"--save", afile + "/sub"}, "--save: " + afile + "/sub"},
      {{"--export-hf", dir + "/mine"}, "--export-hf: " + dir + "/mine holds \"notes.txt\", which an export does not write"},
      {{"--export-hf", afile}, "--export-hf: " + afile + ": a file"},
      {{"--log", dir}, "--log: " + dir + ": a folder"},
  };
  for (const auto& c : cases) {
    const RunResult r = run_engine(tiny(50, c.args), {}, 60);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << "expected: " << c.expected << "\nfound: " << r.err;
    EXPECT_EQ(r.err.find("step 1/"), std::string::npos) << "trained: " << r.err;
  }
  EXPECT_EQ(bytes_of(afile), "keep");
  EXPECT_EQ(bytes_of(dir + "/mine/notes.txt"), "my notes");
}

// Killed while writing a checkpoint (after its first file) or an export (complete, before it is put
// in place): the previous checkpoint resumes and continues the uninterrupted losses, the previous
// export is byte-for-byte what it was.
TEST(EngineSafety, AKillDuringSaveOrExportLeavesThePreviousOnesWhole) {
  const std::string dir = fresh_dir("safety_kill");
  const std::string data = token_file(dir, "train.u16.bin", 3000, 1), ckpt = dir + "/ckpt", out = dir + "/out";
  const auto full = losses_of(json_of(run_engine(tiny(4, {"--data", data, "--json"}))));
  ASSERT_EQ(run_engine(tiny(2, {"--data", data, "--save", ckpt, "--export-hf", out})).exit_code, 0);
  const auto ckpt_before = snapshot(ckpt), out_before = snapshot(out);
  const RunResult in_save = run_engine(tiny(3, {"--data", data, "--resume", ckpt, "--save", ckpt}),
                                       {{"SPPLAN_ENGINE_FAULT", "kill-in:save"}});
  EXPECT_NE(in_save.exit_code, 0);
  EXPECT_NE(in_save.err.find("signal 9"), std::string::npos) << in_save.err;
  for (const auto& [path, bytes] : ckpt_before) EXPECT_EQ(bytes_of(path), bytes) << path;
  const RunResult in_export = run_engine(tiny(3, {"--data", data, "--resume", ckpt, "--export-hf", out}),
                                         {{"SPPLAN_ENGINE_FAULT", "kill-in:export"}});
  EXPECT_NE(in_export.exit_code, 0);
  EXPECT_EQ(snapshot(out), out_before) << "the previous export changed";
  const auto resumed = losses_of(json_of(run_engine(tiny(4, {"--data", data, "--resume", ckpt, "--json"}))));
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_LE(max_rel_diff(resumed, {full[2], full[3]}), 1e-6);
  // An export that completes replaces the folder whole.
  ASSERT_EQ(run_engine(tiny(3, {"--data", data, "--resume", ckpt, "--export-hf", out})).exit_code, 0);
  EXPECT_NE(snapshot(out), out_before);
}

// A resume continues the schedule, the weight-decay grouping and AdamW's settings of the run it
// resumes without being told them again (it once trained at a constant 1e-3), and refuses a
// flag that contradicts them with both values.
TEST(EngineSafety, ResumeContinuesTheScheduleAndTheOptimizer) {
  const std::string dir = fresh_dir("safety_schedule");
  const std::string data = token_file(dir, "train.u16.bin", 3000, 1), ckpt = dir + "/ckpt";
  const std::vector<std::string> settings{"--data", data, "--lr-schedule", "cosine", "--train-steps", "6", "--lr",
                                          "0.002", "--weight-decay-all", "--adam-beta2", "0.99", "--grad-clip", "0.5"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = settings;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const nlohmann::json full = json_of(run_engine(tiny(6, with({"--json"}))));
  ASSERT_EQ(run_engine(tiny(3, with({"--save", ckpt}))).exit_code, 0);
  // Nothing but the data and the folder: the run goes to its schedule's end (6) with its settings.
  const RunResult resumed = run_engine({"run", "--model", "tiny-llama", "--seq", "256", "--sp", "1", "--nproc", "1",
                                        "--seed", "3", "--data", data, "--resume", ckpt, "--json"});
  const nlohmann::json j = json_of(resumed);
  ASSERT_EQ(losses_of(j).size(), 3u) << resumed.err;
  const std::vector<double> full_lrs = numbers(full, "lrs"), full_losses = losses_of(full);
  EXPECT_LE(max_rel_diff(numbers(j, "lrs"), {full_lrs[3], full_lrs[4], full_lrs[5]}), 1e-12);
  EXPECT_LE(max_rel_diff(losses_of(j), {full_losses[3], full_losses[4], full_losses[5]}), 1e-6);
  EXPECT_EQ(j["settings"]["optimizer"]["betas"][1], 0.99);
  // A flag that contradicts the checkpoint: one line, both values.
  const RunResult other = run_engine(tiny(6, {"--data", data, "--resume", ckpt, "--lr", "0.001"}), {}, 60);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--lr: value 0.001 differs from the 0.002 that " + ckpt + "/ckpt-000003 was trained with"),
            std::string::npos) << other.err;
}

// Progressive context extension: resumed at another --seq, files read in order continue at the
// token the checkpoint stopped at (3 steps of 256 tokens: token 768), in windows of the new length;
// the log says where each step read.
TEST(EngineSafety, ResumeAtAnotherSeqContinuesAtTheTokenPosition) {
  const std::string dir = fresh_dir("safety_seq");
  const std::string data = token_file(dir, "train.u16.bin", 6000, 1), ckpt = dir + "/ckpt", log = dir + "/run.jsonl";
  ASSERT_EQ(run_engine(tiny(3, {"--data", data, "--save", ckpt})).exit_code, 0);
  std::vector<std::string> args = tiny(5, {"--data", data, "--resume", ckpt, "--log", log, "--save", ckpt});
  args[4] = "128";  // --seq
  const RunResult r = run_engine(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--seq 128 after 256: --data continues at token 768"), std::string::npos) << r.err;
  std::vector<int64_t> positions;
  for (const auto& line : log_lines(log)) {
    if (line["event"] == "step") positions.push_back(line["data_position"].get<int64_t>());
  }
  EXPECT_EQ(positions, (std::vector<int64_t>{768, 896}));
  std::ifstream manifest(ckpt + "/ckpt-000005/manifest.json");
  EXPECT_EQ(nlohmann::json::parse(manifest)["settings"]["next_token"], 1024);
  // A shuffled pass is an order of one length's windows: another --seq is refused.
  const std::string shuffled = dir + "/shuffled";
  ASSERT_EQ(run_engine(tiny(2, {"--data", data, "--shuffle", "--save", shuffled})).exit_code, 0);
  std::vector<std::string> again = tiny(4, {"--data", data, "--shuffle", "--resume", shuffled});
  again[4] = "128";
  const RunResult refused = run_engine(again, {}, 60);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--seq: value 128 differs from the 256 that"), std::string::npos) << refused.err;
}

// A run killed after its last checkpoint logged steps it trains again when resumed: the log keeps
// each step once. --resume-or-init starts the run in an empty folder and resumes it there.
TEST(EngineSafety, TheLogHasEachStepOnceAndOneCommandStartsAndRestarts) {
  const std::string dir = fresh_dir("safety_restart");
  const std::string data = token_file(dir, "train.u16.bin", 3000, 1), ckpt = dir + "/ckpt", log = dir + "/run.jsonl";
  const std::vector<std::string> args = tiny(4, {"--data", data, "--resume-or-init", ckpt, "--save-every", "2",
                                                 "--log", log});
  const RunResult killed = run_engine(args, {{"SPPLAN_ENGINE_FAULT", "kill:0:4"}});  // dies before step 4
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_NE(killed.err.find("holds no checkpoint; starting from the seeded weights"), std::string::npos) << killed.err;
  const RunResult restarted = run_engine(args);  // the same command
  ASSERT_EQ(restarted.exit_code, 0) << restarted.err;
  EXPECT_NE(restarted.err.find("resumed from " + ckpt + "/ckpt-000002 at step 2 of 4"), std::string::npos)
      << restarted.err;
  std::vector<int64_t> steps;
  for (const auto& line : log_lines(log)) {
    if (line["event"] == "step") steps.push_back(line["step"].get<int64_t>());
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4}));
}

// Small things a long run needs: a try of a longer schedule is not refused for its default warm-up; the
// evaluation covers every sequence of --eval-data and is in --json; text beside a tokenizer is
// refused with a command that makes token ids; a --seq past max_position_embeddings is said.
TEST(EngineSafety, SmallerMends) {
  const Inputs& in = inputs();
  const RunResult try_of_long = run_engine(tiny(2, {"--train-steps", "100", "--json"}));
  EXPECT_EQ(try_of_long.exit_code, 0) << try_of_long.err;
  const nlohmann::json eval = json_of(run_engine(tiny(1, {"--eval-data", in.eval, "--json"})));
  EXPECT_EQ(eval["eval_tokens"], 2 * 256);  // 600 tokens: 2 whole sequences of 256 and their labels
  EXPECT_TRUE(eval["eval_loss"].is_number());
  const std::string text = write_file(in.dir + "/texts", "corpus.txt", "plain words\n");
  write_file(in.dir + "/tok", "tokenizer.json", "{}");
  fs::copy(in.base + "/config.json", in.dir + "/tok/config.json");
  fs::copy(in.base + "/model.safetensors", in.dir + "/tok/model.safetensors");
  const RunResult raw = run_engine(tiny(1, {"--init-from", in.dir + "/tok", "--data", text}), {}, 60);
  EXPECT_EQ(raw.exit_code, 2);
  EXPECT_NE(raw.err.find("text, which the engine reads as bytes (ids 0-255), but " + in.dir + "/tok has a tokenizer"),
            std::string::npos) << raw.err;
  EXPECT_NE(raw.err.find("--tokenizer " + in.dir + "/tok --out " + in.dir + "/texts/corpus " + text), std::string::npos)
      << raw.err;
}

}  // namespace
}  // namespace spplan::engine::testing
