#include "engine/device/cpu_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace spplan::engine {
namespace {

// The value after "key\t: " on the first line that starts with `key`, or "".
std::string first_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (line.rfind(key, 0) != 0 || colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

}  // namespace

std::string cpu_vector_units(const std::string& flags_line) {
  std::istringstream words(flags_line);
  const std::set<std::string> flags{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  const auto has = [&](const char* f) { return flags.count(f) > 0; };
  if (has("avx512f")) {
    const bool bf16 = has("avx512_bf16"), amx = has("amx_bf16");
    if (!bf16 && !amx) return "AVX-512 (no bf16 units)";
    if (bf16 && amx) return "AVX-512 with AVX512-BF16 and AMX";
    return bf16 ? "AVX-512 with AVX512-BF16" : "AVX-512 with AMX";
  }
  if (has("avx2")) return "AVX2 (no AVX-512)";
  if (has("avx")) return "AVX (no AVX2)";
  return {};
}

std::string describe_cpu(const std::string& cpuinfo_text, long cores) {
  std::string model = first_value(cpuinfo_text, "model name");
  if (model.empty()) model = "unknown CPU";
  const long n = std::max(1L, cores);
  std::string out = model + ", " + std::to_string(n) + (n == 1 ? " core" : " cores");
  const std::string units = cpu_vector_units(first_value(cpuinfo_text, "flags"));
  return units.empty() ? out : out + ", " + units;
}

std::string this_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return describe_cpu(text.str(), ::sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace spplan::engine
