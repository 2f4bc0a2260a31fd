// `spplan run` and `spplan calibrate` execute the LibTorch engine, a separate binary
// (spplan-engine, next to spplan) so that the planner builds without LibTorch.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"

namespace spplan::cli {

int cmd_forward_to_engine(int argc, const char* const* argv) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path engine = error ? std::filesystem::path("spplan-engine")
                                             : self.parent_path() / "spplan-engine";
  if (!std::filesystem::exists(engine, error)) {
    std::cerr << "spplan: " << argv[1] << ": the engine is not built (" << engine.string()
              << " not found; configure with -DSPPLAN_BUILD_ENGINE=ON and LibTorch)\n";
    return kExitBadInput;
  }
  std::vector<char*> engine_argv;
  const std::string engine_path = engine.string();
  engine_argv.push_back(const_cast<char*>(engine_path.c_str()));
  for (int i = 1; i < argc; ++i) engine_argv.push_back(const_cast<char*>(argv[i]));
  engine_argv.push_back(nullptr);
  ::execv(engine_path.c_str(), engine_argv.data());
  std::cerr << "spplan: " << argv[1] << ": cannot start " << engine_path << " (" << std::strerror(errno) << ")\n";
  return kExitBadInput;
}

}  // namespace spplan::cli
