// check_outputs_apart: no output is, lies inside or holds an input (each once happened: --log onto the data
// file emptied the corpus; --export-hf onto --init-from overwrote the base model).
#include "planner/core/path_guard.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace spplan {
namespace {

namespace fs = std::filesystem;

// data/train.bin, base/ (a model folder), ckpt/ (a checkpoint folder), links to them.
class PathGuardTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/path_guard." + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/data");
    fs::create_directories(dir_ + "/base");
    fs::create_directories(dir_ + "/ckpt/ckpt-000002");
    std::ofstream(dir_ + "/data/train.bin") << "tokens";
    std::ofstream(dir_ + "/base/config.json") << "{}";
    fs::create_symlink(dir_ + "/data/train.bin", dir_ + "/link.bin");
    fs::create_hard_link(dir_ + "/data/train.bin", dir_ + "/hard.bin");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<NamedPath> inputs() const {
    return {{"--data", dir_ + "/data/train.bin", PathRole::kFile},
            {"--init-from", dir_ + "/base", PathRole::kFolder},
            {"--resume", dir_ + "/ckpt", PathRole::kCheckpoints}};
  }
  // The message for one output against the inputs ("" when allowed).
  std::string check(const std::string& flag, const std::string& path, PathRole role) const {
    const Status s = check_outputs_apart(inputs(), {{flag, path, role}});
    return s ? "" : s.message();
  }
  std::string dir_;
};

TEST_F(PathGuardTest, AnOutputOntoAnInputIsRefusedHoweverItIsSpelled) {
  const struct {
    std::string flag, path;
    PathRole role;
    std::string why;
  } refused[] = {
      {"--log", dir_ + "/data/train.bin", PathRole::kFile, "is the --data file"},
      {"--log", dir_ + "/data/../data/./train.bin", PathRole::kFile, "is the --data file"},
      {"--log", dir_ + "/link.bin", PathRole::kFile, "is the --data file"},
      {"--log", dir_ + "/hard.bin", PathRole::kFile, "is the --data file"},
      {"--export-hf", dir_ + "/base", PathRole::kFolder, "is the --init-from folder"},
      {"--export-hf", dir_ + "/base/", PathRole::kFolder, "is the --init-from folder"},
      {"--save", dir_ + "/base/checkpoints", PathRole::kCheckpoints, "lies inside the --init-from folder"},
      {"--log", dir_ + "/base/run.jsonl", PathRole::kFile, "lies inside the --init-from folder"},
      {"--export-hf", dir_, PathRole::kFolder, "holds the --data file"},
      {"--export-hf", dir_ + "/ckpt", PathRole::kFolder, "is the --resume folder"},
      {"--log", dir_ + "/ckpt/LATEST", PathRole::kFile, "lies inside the --resume folder"},
      {"--log", dir_ + "/ckpt/ckpt-000002/params.f32", PathRole::kFile, "lies inside the --resume folder"},
  };
  for (const auto& c : refused) {
    const std::string m = check(c.flag, c.path, c.role);
    EXPECT_NE(m.find(c.flag + ": "), std::string::npos) << c.path << ": " << m;
    EXPECT_NE(m.find(c.why), std::string::npos) << c.path << ": " << m;
    EXPECT_NE(m.find("allowed: a path apart from every input"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST_F(PathGuardTest, OutputsBesideTheInputsAreAllowed) {
  EXPECT_EQ(check("--log", dir_ + "/data/train.log.jsonl", PathRole::kFile), "");
  EXPECT_EQ(check("--export-hf", dir_ + "/tuned", PathRole::kFolder), "");
  EXPECT_EQ(check("--export-hf", dir_ + "/base-tuned", PathRole::kFolder), "");  // a prefix, not a parent
  // --save continues the folder --resume read; a log beside the checkpoints is not one of them.
  EXPECT_EQ(check("--save", dir_ + "/ckpt", PathRole::kCheckpoints), "");
  EXPECT_EQ(check("--log", dir_ + "/ckpt/run.jsonl", PathRole::kFile), "");
}

TEST_F(PathGuardTest, OutputsDoNotOverlapEachOther) {
  const Status s = check_outputs_apart({}, {{"--export-hf", dir_ + "/out", PathRole::kFolder},
                                            {"--log", dir_ + "/out/run.jsonl", PathRole::kFile}});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("--log: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("lies inside the --export-hf folder"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(one output would overwrite the other"), std::string::npos) << s.message();
  EXPECT_TRUE(check_outputs_apart({}, {{"--save", dir_ + "/out", PathRole::kCheckpoints},
                                       {"--log", dir_ + "/out/run.jsonl", PathRole::kFile}}));
  EXPECT_FALSE(check_outputs_apart({}, {{"--save", dir_ + "/out", PathRole::kCheckpoints},
                                        {"--export-hf", dir_ + "/out", PathRole::kFolder}}));
}

// --trace and --svg on one file (or a hard link, a symbolic link to it) would keep only the last;
// on one character device (/dev/null, a terminal) both are written and neither replaces the other.
TEST_F(PathGuardTest, TwoFileOutputsOnOneFileAreRefusedOnOneDeviceAllowed) {
  for (const std::string& svg : {dir_ + "/data/train.bin", dir_ + "/link.bin", dir_ + "/hard.bin"}) {
    const Status s = check_outputs_apart({}, {{"--trace", dir_ + "/data/train.bin", PathRole::kFile},
                                              {"--svg", svg, PathRole::kFile}});
    EXPECT_EQ(s.message(), "--svg: " + svg + " is the --trace file " + dir_ +
                               "/data/train.bin (one output would overwrite the other; allowed: paths apart from each other)");
  }
  const std::string null_node = dir_ + "/null";
  if (::mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "cannot make a device node here";
  EXPECT_TRUE(check_outputs_apart({}, {{"--trace", null_node, PathRole::kFile}, {"--svg", null_node, PathRole::kFile}}));
}

TEST_F(PathGuardTest, ResolvedPathFollowsLinksAndDots) {
  EXPECT_EQ(resolved_path(dir_ + "/link.bin"), resolved_path(dir_ + "/data/train.bin"));
  EXPECT_EQ(resolved_path(dir_ + "/data/../base/new/x"), resolved_path(dir_ + "/base") + "/new/x");
}

}  // namespace
}  // namespace spplan
