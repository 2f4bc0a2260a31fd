#include "planner/core/version.hpp"

// Set on this file alone by planner/CMakeLists.txt (cmake/version.cmake).
#ifndef SPPLAN_VERSION
#define SPPLAN_VERSION "0.0.0"
#endif
#ifndef SPPLAN_GIT_COMMIT
#define SPPLAN_GIT_COMMIT "unknown"
#endif

namespace spplan {

std::string_view version() { return SPPLAN_VERSION; }

std::string_view commit() { return SPPLAN_GIT_COMMIT; }

std::string version_line(std::string_view program) {
  const std::string hash(commit());
  return std::string(program) + " " + std::string(version()) + " (commit " +
         (hash == "unknown" ? hash + ": not built from a git checkout" : hash) + ")";
}

}  // namespace spplan
