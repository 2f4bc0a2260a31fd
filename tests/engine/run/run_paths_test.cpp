// engine/run/run_paths.hpp: which flags are inputs and which outputs, and the checks before the
// first step (no input is ever an output). LibTorch-free; the end-to-end refusals are in safety_test.cpp.
#include "engine/run/run_paths.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

Result<RunOptions> parse(std::vector<std::string> words) {
  std::vector<const char*> argv{"spplan-engine", "run", "--seq", "1024", "--sp", "1", "--nproc", "1"};
  for (const auto& w : words) argv.push_back(w.c_str());
  return parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
}

std::vector<std::string> flags_of(const std::vector<NamedPath>& paths) {
  std::vector<std::string> out;
  for (const NamedPath& p : paths) out.push_back(p.flag + " " + p.path);
  return out;
}

TEST(RunPaths, EveryFlagThatNamesAPathIsAnInputOrAnOutput) {
  const std::string dir = testing::fresh_dir("run_paths_flags");
  const std::string configs = SPPLAN_CONFIGS_DIR;
  auto o = parse({"--model", configs + "/models/tiny-llama.toml", "--gpu", "h100-80gb", "--data",
                  "a.u16.bin,b.u16.bin", "--eval-data", "e.u16.bin", "--resume", dir + "/ckpt", "--log", "run.jsonl",
                  "--save", dir + "/ckpt", "--export-hf", "out"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  // A --model or --gpu that names a file is an input; a preset names none.
  EXPECT_EQ(flags_of(run_inputs(*o)),
            (std::vector<std::string>{"--model " + configs + "/models/tiny-llama.toml", "--data a.u16.bin",
                                      "--data b.u16.bin", "--eval-data e.u16.bin", "--resume " + dir + "/ckpt"}));
  EXPECT_EQ(flags_of(run_outputs(*o)),
            (std::vector<std::string>{"--log run.jsonl", "--save " + dir + "/ckpt", "--export-hf out"}));
}

// --resume-or-init: an empty or new folder starts fresh (and --save defaults to it), a folder with a
// checkpoint resumes, anything else is refused rather than guessed at.
TEST(RunPaths, ResumeOrInitDecidesByTheFoldersContent) {
  const std::string dir = testing::fresh_dir("run_paths_roi");
  auto fresh = parse({"--model", "tiny-llama", "--resume-or-init", dir + "/new"});
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_EQ(fresh->resume_dir, "");
  EXPECT_EQ(fresh->save_dir, dir + "/new");
  testing::write_file(dir + "/held", "LATEST", "ckpt-000002\n");
  auto resumes = parse({"--model", "tiny-llama", "--resume-or-init", dir + "/held", "--save", dir + "/elsewhere"});
  ASSERT_TRUE(resumes.ok()) << resumes.status().message();
  EXPECT_EQ(resumes->resume_dir, dir + "/held");
  EXPECT_EQ(resumes->save_dir, dir + "/elsewhere");
  testing::write_file(dir + "/junk", "notes.txt", "mine");
  auto refused = parse({"--model", "tiny-llama", "--resume-or-init", dir + "/junk"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "--resume-or-init: " + dir + "/junk holds \"notes.txt\" and no checkpoint "
                                        "(allowed: a new or empty folder, or one written by --save)");
}

TEST(RunPaths, OutputsAreCheckedWritableAndApart) {
  const std::string dir = testing::fresh_dir("run_paths_check");
  const std::string data = testing::write_file(dir, "train.u16.bin", "ab");
  auto ok = parse({"--model", "tiny-llama", "--data", data, "--log", dir + "/logs/run.jsonl", "--save", dir + "/ckpt",
                   "--export-hf", dir + "/out"});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(check_run_paths(*ok)) << check_run_paths(*ok).message();
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/ckpt"));  // made before the first step
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));         // put in place whole after the last
  auto onto = parse({"--model", "tiny-llama", "--data", data, "--log", data});
  ASSERT_TRUE(onto.ok());
  EXPECT_EQ(check_run_paths(*onto).message(), "--log: " + data + " is the --data file " + data +
                                                  " (an input is never written; allowed: a path apart from every "
                                                  "input)");
}

}  // namespace
}  // namespace spplan::engine
