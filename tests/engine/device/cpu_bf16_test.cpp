// engine/device/cpu_bf16.hpp: the verdict on measured rates (the probe itself runs in
// precision_test.cpp's EngineBf16.SaysOnceWhenThisCpuEmulatesBf16).
#include "engine/device/cpu_bf16.hpp"

#include <gtest/gtest.h>

namespace spplan::engine {
namespace {

TEST(CpuBf16, EmulatedOnlyWellBelowTheFp32Rate) {
  struct Row {
    double bf16, fp32;
    bool emulated;
  };
  const Row rows[] = {
      {0.33e9, 153e9, true},   // AVX2-only AMD EPYC: the scalar fallback (measured on one)
      {30e9, 153e9, true},     // under a quarter
      {40e9, 153e9, false},    // AVX-512 without BF16: oneDNN converts, near the fp32 rate
      {300e9, 150e9, false},   // AVX512-BF16 / AMX: faster than fp32
  };
  for (const Row& r : rows) EXPECT_EQ(bf16_is_emulated({r.bf16, r.fp32}), r.emulated) << r.bf16 << " vs " << r.fp32;
}

}  // namespace
}  // namespace spplan::engine
