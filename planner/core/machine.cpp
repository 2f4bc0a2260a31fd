#include "planner/core/machine.hpp"

#include <fstream>

namespace spplan {

std::optional<double> machine_ram_bytes(const std::string& meminfo_path) {
  std::ifstream in(meminfo_path);
  std::string key;
  while (in >> key) {
    if (key == "MemTotal:") {
      double kib = 0;
      std::string unit;
      if (in >> kib >> unit && unit == "kB" && kib > 0) return kib * 1024.0;
      return std::nullopt;
    }
    in.ignore(1 << 16, '\n');
  }
  return std::nullopt;
}

}  // namespace spplan
