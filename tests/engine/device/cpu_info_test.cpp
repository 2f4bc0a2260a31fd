// engine/device/cpu_info.hpp: the CPU a validate report names, from /proc/cpuinfo's text.
#include "engine/device/cpu_info.hpp"

#include <gtest/gtest.h>

namespace spplan::engine {
namespace {

TEST(CpuInfo, VectorUnitsFromTheFlagsLine) {
  EXPECT_EQ(cpu_vector_units("fpu sse sse2 avx avx2 fma"), "AVX2 (no AVX-512)");
  EXPECT_EQ(cpu_vector_units("avx avx2 avx512f avx512bw avx512vl"), "AVX-512 (no bf16 units)");
  EXPECT_EQ(cpu_vector_units("avx2 avx512f avx512_bf16"), "AVX-512 with AVX512-BF16");
  EXPECT_EQ(cpu_vector_units("avx2 avx512f avx512_bf16 amx_bf16 amx_tile"), "AVX-512 with AVX512-BF16 and AMX");
  EXPECT_EQ(cpu_vector_units("sse sse2 avx"), "AVX (no AVX2)");
  EXPECT_EQ(cpu_vector_units("sse sse2"), "");
  // A word that only contains a flag's name is not that flag.
  EXPECT_EQ(cpu_vector_units("avx2 xavx512f avx512_bf16x"), "AVX2 (no AVX-512)");
}

TEST(CpuInfo, DescribesModelCoresAndUnitsOfTheFirstProcessor) {
  const std::string text =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx avx2 fma\n\n"
      "processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx avx2 fma\n";
  EXPECT_EQ(describe_cpu(text, 2), "AMD EPYC, 2 cores, AVX2 (no AVX-512)");
  EXPECT_EQ(describe_cpu("processor\t: 0\n", 0), "unknown CPU, 1 core");
  EXPECT_EQ(describe_cpu("", 4), "unknown CPU, 4 cores");
}

}  // namespace
}  // namespace spplan::engine
