// look_at / check_readable_file / check_folder: paths a user types that std::filesystem's throwing
// overloads would abort on (as `plan --model <300 characters>` did) are answered with one line.
#include "planner/core/path_info.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace spplan {
namespace {

namespace fs = std::filesystem;

// A scratch folder per test process with a file, a folder and a symbolic link loop.
class PathInfoTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/path_info." + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/folder");
    std::ofstream(dir_ + "/file.toml") << "x = 1\n";
    fs::create_symlink("loop_b", dir_ + "/loop_a");
    fs::create_symlink("loop_a", dir_ + "/loop_b");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

const std::string kLongName(300, 'a');  // NAME_MAX is 255 on Linux's file systems

TEST_F(PathInfoTest, KindsAndReasons) {
  EXPECT_EQ(look_at(dir_ + "/file.toml").kind, PathKind::kFile);
  EXPECT_EQ(look_at(dir_ + "/folder").kind, PathKind::kDirectory);
  EXPECT_EQ(look_at(dir_ + "/absent").kind, PathKind::kMissing);
  EXPECT_EQ(look_at(dir_ + "/file.toml/below").kind, PathKind::kMissing);  // ENOTDIR: nothing there
  EXPECT_EQ(look_at("").kind, PathKind::kMissing);
  EXPECT_EQ(look_at("/dev/null").kind, PathKind::kOther);
  const PathInfo long_name = look_at(kLongName);
  EXPECT_EQ(long_name.kind, PathKind::kUnusable);
  EXPECT_EQ(long_name.why, "File name too long");
  const PathInfo loop = look_at(dir_ + "/loop_a");
  EXPECT_EQ(loop.kind, PathKind::kUnusable);
  EXPECT_EQ(loop.why, "Too many levels of symbolic links");
}

TEST_F(PathInfoTest, ReadableFileMessages) {
  EXPECT_TRUE(check_readable_file(dir_ + "/file.toml").is_ok());
  const struct {
    std::string path, expected;
  } cases[] = {
      {dir_ + "/absent", dir_ + "/absent: cannot open (no such file)"},
      {dir_ + "/folder", dir_ + "/folder: cannot open (a directory; allowed: a file)"},
      {"/dev/null", "/dev/null: cannot open (not a regular file; allowed: a file)"},
      {kLongName, kLongName + ": cannot open (File name too long)"},
      {dir_ + "/loop_a", dir_ + "/loop_a: cannot open (Too many levels of symbolic links)"},
  };
  for (const auto& c : cases) {
    const Status s = check_readable_file(c.path, "--data: ");
    EXPECT_EQ(s.message(), "--data: " + c.expected);
    EXPECT_EQ(s.code(), Status::Code::kInvalidInput);
  }
}

// A path read from a TOML string may hold a newline ("a\nb/c"): the message stays one line
// (fuzz_plan_toml found "key \"model.preset\": qwe" and "2/4b: cannot open ..." on two).
TEST_F(PathInfoTest, ControlCharactersInAPathAreEscapedInTheMessage) {
  EXPECT_EQ(check_readable_file(dir_ + "/a\nb/c.toml", "key \"model.preset\": ").message(),
            "key \"model.preset\": " + dir_ + "/a\\x0ab/c.toml: cannot open (no such file)");
  EXPECT_EQ(check_folder(dir_ + "/a\tb", "--resume: ", "a folder").message(),
            "--resume: " + dir_ + "/a\\x09b: no such folder (allowed: a folder)");
}

TEST_F(PathInfoTest, FolderMessages) {
  EXPECT_TRUE(check_folder(dir_ + "/folder", "--resume: ", "a folder written by --save").is_ok());
  EXPECT_EQ(check_folder(dir_ + "/absent", "--resume: ", "a folder written by --save").message(),
            "--resume: " + dir_ + "/absent: no such folder (allowed: a folder written by --save)");
  EXPECT_EQ(check_folder(dir_ + "/file.toml", "--resume: ", "a folder written by --save").message(),
            "--resume: " + dir_ + "/file.toml: not a folder (allowed: a folder written by --save)");
  EXPECT_EQ(check_folder(kLongName, "--init-from: ", "a Hugging Face model folder").message(),
            "--init-from: " + kLongName + ": cannot open (File name too long)");
}

}  // namespace
}  // namespace spplan
