// Every fuzz target's seeds and every input that once made it fail (fuzz/regressions/NAME/,
// one file each, named for what it broke) go through its body in the normal build: a body
// aborts on a broken rule, so a regression ends this test with a crash naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz/fuzz_bodies.hpp"

namespace spplan::fuzz {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Seeds and regressions of one target, sorted.
std::vector<fs::path> inputs_of(const Target& t) {
  std::vector<fs::path> files;
  auto add = [&](const fs::path& dir, const std::string& ending) {
    if (!fs::is_directory(dir)) return;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string p = e.path().string();
      if (e.is_regular_file() && p.size() >= ending.size() && p.compare(p.size() - ending.size(), ending.size(), ending) == 0) {
        files.push_back(e.path());
      }
    }
  };
  for (const auto& d : t.seed_dirs) add(fs::path(SPPLAN_SOURCE_DIR) / d, t.seed_ending);
  add(fs::path(SPPLAN_SOURCE_DIR) / "fuzz" / "regressions" / t.name, "");
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzReplay : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzReplay, SeedsAndPastFailuresRunCleanly) {
  const Target* t = find_target(GetParam());
  ASSERT_NE(t, nullptr);
  const auto files = inputs_of(*t);
  EXPECT_FALSE(files.empty()) << "no seeds for " << t->name;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    t->body(read_bytes(f));
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& t : targets()) names.push_back(t.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spplan::fuzz
