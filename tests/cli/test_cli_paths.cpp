// Every `spplan` command that takes a path, given one that cannot be looked at (a name too long,
// a symbolic link loop, a folder), and numbers beyond their type on the command line: one line,
// exit 2, nothing on stdout (`plan --model <300 characters>` once aborted with exit 134).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "run_spplan.hpp"

namespace {

namespace fs = std::filesystem;

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;

void expect_one_line_exit_2(const std::string& args, const std::string& expected) {
  const CliRun r = run_spplan(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n got: " << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
  EXPECT_EQ(r.err.rfind(expected, 0), 0u) << args << "\n got: " << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

class CliPaths : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/cli_paths." + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/folder.toml");
    fs::create_symlink("loop_b.toml", dir_ + "/loop_a.toml");
    fs::create_symlink("loop_a.toml", dir_ + "/loop_b.toml");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

const std::string kLong(300, 'x');  // beyond NAME_MAX (255)
const std::string kPlan = std::string(SPPLAN_SOURCE_DIR) + "/configs/plans/qwen3-4b-128k-4xh100.toml";

// Each command's path flag with `{}` where the bad path goes.
const char* const kInputs[] = {
    "estimate --model {} --gpu h100-80gb --gpus 4 --seq 1k --sp 1",
    "estimate --model qwen3-4b --gpu {} --gpus 4 --seq 1k --sp 1",
    "plan --model {} --gpu h100-80gb --gpus 8 --seq 128k",
    "fit --model {} --gpu h100-80gb --gpus 8 --seq 128k",
    "max-seq --model qwen3-4b --gpu {} --gpus 8",
    "sweep --model {} --gpu h100-80gb --gpus 8",
    "simulate --plan {}",
    "export --plan {} --format deepspeed",
    "validate published {}",
};

std::string fill(std::string pattern, const std::string& path) { return pattern.replace(pattern.find("{}"), 2, path); }

TEST_F(CliPaths, InputPathsThatCannotBeLookedAtAreOneLine) {
  const struct {
    std::string path, reason;
  } paths[] = {
      {kLong + ".toml", "File name too long"},
      {dir_ + "/loop_a.toml", "Too many levels of symbolic links"},
      {dir_ + "/folder.toml", "a directory; allowed: a file"},
  };
  for (const char* command : kInputs) {
    for (const auto& p : paths) {
      // --model takes a Hugging Face model folder: a folder is refused for what it lacks.
      const bool model_folder = std::string(command).find("--model {}") != std::string::npos && p.path == dir_ + "/folder.toml";
      expect_one_line_exit_2(fill(command, p.path),
                             "spplan: " + (model_folder ? "--model: " + p.path + ": a folder without config.json (allowed: "
                                                        : p.path + ": cannot open (" + p.reason + ")"));
    }
  }
}

// `--model FOLDER` (like run's --init-from): a Hugging Face model folder is its config.json, named as the Hub
// names it; the cache's snapshots/<hash>/ layout says which model it is.
TEST_F(CliPaths, ModelFolderIsItsConfigJson) {
  const std::string snapshot = dir_ + "/hub/models--Qwen--Qwen3-4B/snapshots/0123456789abcdef0123456789abcdef01234567";
  fs::create_directories(snapshot);
  fs::copy_file(std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/config/data/config.json", snapshot + "/config.json");
  const std::string flags = " --gpu h100-80gb --gpus 4 --seq 32k --sp 4";
  const CliRun by_folder = run_spplan("estimate --model " + snapshot + flags + " --json");
  const CliRun by_file = run_spplan("estimate --model " + snapshot + "/config.json" + flags + " --json");
  ASSERT_EQ(by_folder.exit_code, 0) << by_folder.err;
  EXPECT_EQ(by_folder.out, by_file.out);
  EXPECT_NE(by_folder.out.find("\"model\": \"Qwen/Qwen3-4B\""), std::string::npos) << by_folder.out;
  const CliRun text = run_spplan("estimate --model " + snapshot + "/" + flags);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("Qwen/Qwen3-4B on 4x h100-80gb", 0), 0u) << text.out;
  fs::create_directories(dir_ + "/empty");
  expect_one_line_exit_2("estimate --model " + dir_ + "/empty" + flags,
                         "spplan: --model: " + dir_ + "/empty: a folder without config.json (allowed: a model preset, a "
                         "model TOML file, a Hugging Face config.json or a folder holding one)\n");
}

// A preset-like name too long for a file name: it is not a preset (std::filesystem threw, exit 134).
TEST_F(CliPaths, OverLongPresetNameIsNotAPreset) {
  expect_one_line_exit_2("plan --model " + kLong + " --gpu h100-80gb --gpus 8 --seq 128k",
                         "spplan: --model: value \"" + kLong + "\" is not a preset or a file (allowed presets: ");
  expect_one_line_exit_2("estimate --model qwen3-4b --gpu " + kLong + " --gpus 4 --seq 1k --sp 1",
                         "spplan: --gpu: value \"" + kLong + "\" is not a preset or a file (allowed presets: ");
}

TEST_F(CliPaths, OutputPathsThatCannotBeWrittenAreOneLine) {
  const std::string too_long = dir_ + "/" + kLong + ".out";
  const std::string in_a_file = kPlan + "/below.json";  // a path under a file
  for (const std::string& out : {too_long, in_a_file}) {
    for (const std::string& args : {"plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 128k --out " + out,
                                    "export --plan " + kPlan + " --format deepspeed --out " + out,
                                    "simulate --plan " + kPlan + " --trace " + out,
                                    "simulate --plan " + kPlan + " --svg " + out}) {
      const CliRun r = run_spplan(args);
      EXPECT_EQ(r.exit_code, 2) << args << "\n got: " << r.err;
      // A path under the --plan file lies inside an input: the path guard says so before any write.
      if (out == in_a_file && args.rfind("plan ", 0) != 0) {
        EXPECT_NE(r.err.find(out + " lies inside the --plan file " + kPlan), std::string::npos) << args << "\n got: " << r.err;
      } else {
        EXPECT_EQ(r.err.rfind("spplan: " + out + ": cannot write (", 0), 0u) << args << "\n got: " << r.err;
      }
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    }
  }
}

// A character device node of the test's own in its folder (never the machine's /dev), or "" where
// one cannot be made or opened (not root, a file system mounted nodev).
std::string device_node(const std::string& dir, const std::string& name, dev_t device) {
  const std::string path = dir + "/" + name;
  if (mknod(path.c_str(), S_IFCHR | 0666, device) != 0) return "";
  const int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return "";
  close(fd);
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::string kPlanArgs = "plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 128k";

// --out onto a FIFO or a device writes into it: it is never replaced by a file (run as root, a
// rename over /dev/null took the machine's null device away).
TEST_F(CliPaths, OutputsOntoAFifoOrADeviceLeaveThemWhatTheyAre) {
  const std::string fifo = dir_ + "/plan.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_one_line_exit_2(kPlanArgs + " --out " + fifo,
                         "spplan: " + fifo + ": cannot write (a FIFO nobody reads; allowed: a regular file, or a FIFO with a reader)");
  EXPECT_TRUE(fs::is_fifo(fifo));
  const std::string null_node = device_node(dir_, "null", makedev(1, 3));
  if (null_node.empty()) GTEST_SKIP() << "cannot make a character device here";
  for (const std::string& args : {kPlanArgs + " --out " + null_node,
                                  "export --plan " + kPlan + " --format deepspeed --out " + null_node,
                                  // two outputs on one device are two writes to it, not one file over another
                                  "simulate --plan " + kPlan + " --trace " + null_node + " --svg " + null_node}) {
    const CliRun r = run_spplan(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n got: " << r.err;
    EXPECT_TRUE(fs::is_character_file(null_node)) << args;
  }
}

// The trainer record a plan is searched with, and the base it names, are inputs like the model.
TEST_F(CliPaths, PlanOutOntoItsTrainerRecordOrItsBaseIsRefused) {
  const std::string base = dir_ + "/base.toml", record = dir_ + "/mine.toml";
  std::ofstream(base) << "name = \"base\"\nbase = \"hf\"\n";
  std::ofstream(record) << "name = \"mine\"\nbase = \"base.toml\"\n";  // beside the record
  const std::string base_as_read = fs::path(base).lexically_normal().string();
  for (const auto& [out, named] : {std::pair{record, "--out: " + record + " is the --trainer file " + record},
                                   std::pair{base, "--out: " + base + " is the --trainer base file " + base_as_read}}) {
    const std::string before = read_all(out);
    expect_one_line_exit_2(kPlanArgs + " --trainer " + record + " --out " + out,
                           "spplan: " + named + " (an input is never written; allowed: a path apart from every input)");
    EXPECT_EQ(read_all(out), before);
  }
}

// A plan that names presets read their files: export and simulate leave them alone. The presets
// are a copy in the test's folder (SPPLAN_CONFIG_DIR), so a broken guard cannot touch configs/.
TEST_F(CliPaths, OutputsOntoThePresetsAPlanNamesAreRefused) {
  const std::string configs = dir_ + "/configs";
  fs::copy(std::string(SPPLAN_SOURCE_DIR) + "/configs", configs, fs::copy_options::recursive);
  const std::string env = "SPPLAN_CONFIG_DIR=" + configs;
  const struct {
    std::string args, flag, file, named;
  } cases[] = {
      {"export --plan " + kPlan + " --format deepspeed --out ", "--out", configs + "/models/qwen3-4b.toml", "--plan's model"},
      {"simulate --plan " + kPlan + " --trace ", "--trace", configs + "/gpus/h100-80gb.toml", "--plan's gpu"},
      {"simulate --plan " + kPlan + " --svg ", "--svg", configs + "/trainers/arctic.toml", "--plan's trainer"},
  };
  for (const auto& c : cases) {
    const std::string before = read_all(c.file);
    const CliRun r = run_spplan(c.args + c.file, env);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n got: " << r.err;
    EXPECT_EQ(r.err.rfind("spplan: " + c.flag + ": " + c.file + " is the " + c.named + " file ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_EQ(read_all(c.file), before);
  }
}

// A GPU file's base preset is read with it: plan --out onto that preset is refused like the file.
// The presets are a copy in the test's folder (SPPLAN_CONFIG_DIR), as above.
TEST_F(CliPaths, PlanOutOntoTheBaseOfItsGpuFileIsRefused) {
  const std::string configs = dir_ + "/configs";
  fs::copy(std::string(SPPLAN_SOURCE_DIR) + "/configs", configs, fs::copy_options::recursive);
  const std::string gpu = dir_ + "/h100-96gb.toml", preset = configs + "/gpus/h100-80gb.toml";
  std::ofstream(gpu) << "base = \"h100-80gb\"\nmemory_gib = 96\n";
  const std::string before = read_all(preset);
  const CliRun r = run_spplan("plan --model qwen3-4b --gpu " + gpu + " --gpus 4 --seq 128k --out " + preset,
                              "SPPLAN_CONFIG_DIR=" + configs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("spplan: --out: " + preset + " is the --gpu base file ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_EQ(read_all(preset), before);
}

// --trace and --svg on one file, however it is spelled: one would overwrite the other.
TEST_F(CliPaths, SimulateTraceAndSvgOnOneFileAreRefused) {
  const std::string out = dir_ + "/step.out";
  std::ofstream(out) << "kept\n";
  fs::create_hard_link(out, dir_ + "/hard.out");
  fs::create_symlink("step.out", dir_ + "/link.out");
  for (const std::string& second : {out, dir_ + "/hard.out", dir_ + "/link.out"}) {
    expect_one_line_exit_2("simulate --plan " + kPlan + " --trace " + out + " --svg " + second,
                           "spplan: --svg: " + second + " is the --trace file " + out +
                               " (one output would overwrite the other; allowed: paths apart from each other)");
    EXPECT_EQ(read_all(out), "kept\n");
  }
}

// An answer that could not be written is a failure: exit 2 and one line, not exit 0.
TEST_F(CliPaths, StandardOutputThatCannotBeWrittenIsExit2) {
  const std::string full = device_node(dir_, "full", makedev(1, 7));  // the numbers of /dev/full
  if (full.empty()) GTEST_SKIP() << "cannot make a character device here";
  for (const std::string& args : {std::string("--version"), "export --plan " + kPlan + " --format deepspeed"}) {
    const CliRun r = run_spplan(args + " >" + full);
    EXPECT_EQ(r.exit_code, 2) << args << "\n got: " << r.err;
    const std::string line = "spplan: standard output: write failed (No space left on device)\n";
    EXPECT_GE(r.err.size(), line.size()) << args;
    EXPECT_EQ(r.err.substr(r.err.size() - std::min(r.err.size(), line.size())), line) << args << "\n got: " << r.err;
  }
}

// Whole-number flags given floats beyond int64_t, NaN, infinities: refused by the flag's range.
TEST(CliNumbers, BeyondTheTypeNanAndInfinityAreOneLine) {
  for (const std::string value : {"1e28", "9223372036854775808", "nan", "inf", "-inf"}) {
    expect_one_line_exit_2("estimate --model qwen3-4b --gpu h100-80gb --gpus " + value + " --seq 1k --sp 1",
                           "spplan: --gpus: value \"" + value + "\" is not allowed (allowed: a whole number from 1 to ");
    expect_one_line_exit_2("estimate --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 1k --sp " + value,
                           "spplan: --sp: value \"" + value + "\" is not allowed (allowed: a whole number from 1 to ");
    expect_one_line_exit_2("plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 1k --top " + value,
                           "spplan: --top: value \"" + value + "\" is not allowed (allowed: a whole number from 1 to ");
  }
  expect_one_line_exit_2("estimate --model qwen3-4b --gpu h100-80gb --gpus 4 --seq nan --sp 1",
                         "spplan: --seq: value \"nan\" is not a sequence length (allowed: ");
  expect_one_line_exit_2("estimate --model qwen3-4b --gpu h100-80gb --gpus 4 --seq -0 --sp 1",
                         "spplan: --seq: value \"-0\" is not a whole positive number of tokens (allowed: ");
  expect_one_line_exit_2("sweep --model qwen3-4b --gpu h100-80gb --gpus 4 --seq-from inf",
                         "spplan: --seq-from: value \"inf\" is not a sequence length (allowed: ");
}

}  // namespace
