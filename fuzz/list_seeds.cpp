// spplan_fuzz_seeds NAME SOURCE_DIR: prints the seed files of fuzz target NAME, one path a line
// (scripts/sanitize.sh copies them into the target's corpus). Without arguments: the target names.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz/fuzz_bodies.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc == 1) {
    for (const auto& t : spplan::fuzz::targets()) std::cout << t.name << "\n";
    return 0;
  }
  const auto* target = argc == 3 ? spplan::fuzz::find_target(argv[1]) : nullptr;
  if (target == nullptr) {
    std::cerr << "spplan_fuzz_seeds: usage: spplan_fuzz_seeds [NAME SOURCE_DIR] (NAME: a fuzz target)\n";
    return 2;
  }
  std::vector<std::string> files;
  for (const auto& dir : target->seed_dirs) {
    std::error_code error;
    for (const auto& e : fs::directory_iterator(fs::path(argv[2]) / dir, error)) {
      const std::string p = e.path().string();
      const auto& end = target->seed_ending;
      if (e.is_regular_file() && p.size() >= end.size() && p.compare(p.size() - end.size(), end.size(), end) == 0) {
        files.push_back(p);
      }
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) std::cout << f << "\n";
  return 0;
}
