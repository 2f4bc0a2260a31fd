// One libFuzzer target: compiled once per body with SPPLAN_FUZZ_BODY set to its name (fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  spplan::fuzz::SPPLAN_FUZZ_BODY(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
