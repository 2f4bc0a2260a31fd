#include "engine/io/fault_point.hpp"

#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace spplan::engine {

void fault_point(const char* name) {
  const char* fault = std::getenv("SPPLAN_ENGINE_FAULT");
  constexpr const char kPrefix[] = "kill-in:";
  if (fault == nullptr || std::strncmp(fault, kPrefix, sizeof kPrefix - 1) != 0) return;
  if (std::strcmp(fault + sizeof kPrefix - 1, name) == 0) ::raise(SIGKILL);
}

}  // namespace spplan::engine
