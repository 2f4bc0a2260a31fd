// costmodel/host_cpu.hpp: ranks that share one CPU, priced by one rule for `spplan plan`, the
// simulator, `spplan run` and `validate engine` (before, `plan` gave each rank the whole CPU).
#include "planner/costmodel/host_cpu.hpp"

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::costmodel {
namespace {

// A CPU spec as calibrate writes one (no CUDA context, no NCCL buffers), without thread keys.
GpuSpec cpu_spec(double bf16_tflops) {
  GpuSpec cpu;
  cpu.name = "cpu-host";
  cpu.bf16_tflops = bf16_tflops;
  cpu.fp32_tflops = 1.0;
  cpu.hbm_GBps = 40;
  cpu.pcie_GBps = 20;
  cpu.memory_gib = 24;
  cpu.cuda_context_gib = cpu.nccl_gib_per_group = 0;
  return cpu;
}

// Without thread keys (not measured by calibrate) each of R ranks gets 1/R of everything but the
// capacity, which the costmodel prices per rank.
TEST(HostShare, WithoutThreadKeysEachRankGetsItsFraction) {
  const GpuSpec shared = host_share(cpu_spec(2.0), 2, 1);
  EXPECT_DOUBLE_EQ(shared.bf16_tflops, 1.0);
  EXPECT_DOUBLE_EQ(shared.fp32_tflops, 0.5);
  EXPECT_DOUBLE_EQ(shared.hbm_GBps, 20);
  EXPECT_DOUBLE_EQ(shared.pcie_GBps, 10);
  EXPECT_DOUBLE_EQ(shared.memory_gib, 24);
  const auto h100 = load_gpu("h100-80gb");
  ASSERT_TRUE(h100.ok());
  EXPECT_FALSE(describes_host_cpu(*h100));
  EXPECT_TRUE(describes_host_cpu(cpu_spec(1.0)));
}

// Amdahl's law through the measured point: 1 at one thread, the measurement at its thread count,
// linear when nothing was measured or the measurement was linear (or better).
TEST(HostShare, AmdahlSpeedupPassesThroughItsMeasurement) {
  EXPECT_DOUBLE_EQ(amdahl_speedup(1, 2, 1.68), 1.0);
  EXPECT_NEAR(amdahl_speedup(2, 2, 1.68), 1.68, 1e-12);
  EXPECT_NEAR(amdahl_speedup(16, 16, 10), 10, 1e-12);
  EXPECT_NEAR(amdahl_speedup(4, 16, 10), 1 / (1 - 0.96 + 0.96 / 4), 1e-12);  // parallel part (1 - 1/10) / (1 - 1/16)
  EXPECT_DOUBLE_EQ(amdahl_speedup(8, 1, 0), 8.0);
  EXPECT_DOUBLE_EQ(amdahl_speedup(3, 2, 2.2), 3.0);  // super-linear clamps to linear
}

// A calibrated 2-thread CPU whose GEMM ran 1.68x faster on both threads (the AMD EPYC of issue
// 28): four ranks each run one thread on half a core. Attention and bandwidth get a quarter of
// the measured rates; the GEMM half its one-thread rate, 2 / 1.68 more than a quarter.
TEST(HostShare, ARankRunsItsGemmAtTheRateOfItsThreads) {
  GpuSpec cpu = cpu_spec(1.0);
  cpu.fp32_matmul_efficiency = 1.0;
  cpu.fp32_attention_efficiency = 0.8;
  cpu.host_threads = 2;
  cpu.matmul_thread_speedup = 1.68;
  EXPECT_EQ(default_threads_per_rank(cpu, 4), 1);
  EXPECT_EQ(default_threads_per_rank(cpu, 1), 2);
  const GpuSpec four = host_share(cpu, 4, 1);
  EXPECT_NEAR(four.fp32_tflops * four.fp32_matmul_efficiency, 0.5 / 1.68, 1e-12);
  EXPECT_NEAR(four.fp32_tflops * four.fp32_attention_efficiency, 0.8 / 4, 1e-12);
  EXPECT_NEAR(four.hbm_GBps, 10, 1e-12);
  EXPECT_NEAR(four.pcie_GBps, 5, 1e-12);
  EXPECT_LE(four.fp32_attention_efficiency, 1.0);  // still fractions of the shared peak
  EXPECT_LE(four.fp32_matmul_efficiency, 1.0);
  const GpuSpec one = host_share(cpu, 1, 2);  // one rank on both threads: the measured rates
  EXPECT_DOUBLE_EQ(one.fp32_tflops * one.fp32_matmul_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(one.fp32_tflops * one.fp32_attention_efficiency, 0.8);
  const GpuSpec two = host_share(cpu, 2, 1);  // a thread each, a core each: the one-thread GEMM
  EXPECT_NEAR(two.fp32_tflops * two.fp32_matmul_efficiency, 1 / 1.68, 1e-12);
  EXPECT_NEAR(two.hbm_GBps, 20, 1e-12);
}

// Each GEMM class shares by its own measured speedup (on the same EPYC: the emulated bf16
// backward ran at one thread's rate on two, 1.02x; the bf16 forward 1.83x): two ranks of one thread
// each get the bf16 backward's whole measured rate, the bf16 forward's 1/1.83, and a class with no
// speedup of its own the fp32 forward's (1.68). The bf16 peak takes the largest share, so every
// bf16 efficiency stays a fraction of it.
TEST(HostShare, EachGemmClassSharesByItsOwnSpeedup) {
  GpuSpec cpu = cpu_spec(1.0);
  cpu.bf16_tflops = 0.1;
  cpu.matmul_efficiency = 0.2;       // bf16 forward: 0.02 TFLOP/s
  cpu.matmul_bwd_efficiency = 0.02;  // bf16 backward: 0.002
  cpu.attention_efficiency = 1.0;
  cpu.fp32_matmul_efficiency = 1.0;
  cpu.fp32_matmul_bwd_efficiency = 0.8;
  cpu.host_threads = 2;
  cpu.matmul_thread_speedup = 1.68;
  cpu.bf16_matmul_thread_speedup = 1.83;
  cpu.bf16_matmul_bwd_thread_speedup = 1.0;
  const GpuSpec two = host_share(cpu, 2, 1);
  EXPECT_NEAR(two.bf16_tflops * two.matmul_efficiency, 0.02 / 1.83, 1e-12);
  EXPECT_NEAR(two.bf16_tflops * two.matmul_bwd_efficiency, 0.002, 1e-12);
  EXPECT_NEAR(two.bf16_tflops * two.attention_efficiency, 0.1 / 2, 1e-12);
  EXPECT_NEAR(two.fp32_tflops * two.fp32_matmul_bwd_efficiency, 0.8 / 1.68, 1e-12);  // the fp32 forward's
  for (double e : {two.matmul_efficiency, two.matmul_bwd_efficiency, two.attention_efficiency}) EXPECT_LE(e, 1.0);
  cpu.matmul_bwd_efficiency = 0;  // not measured: the backward runs at the forward's share and rate
  EXPECT_DOUBLE_EQ(host_share(cpu, 2, 1).matmul_bwd_efficiency, 0);
}

// `spplan plan` on a calibrated CPU: each rank gets its share (the ranks on the node, the
// host's threads split between them), the CPU's kernels are priced, and pricing twice changes
// nothing. A GPU plan passes through.
TEST(AsPriced, APlanOnACpuIsPricedPerRankOnceAndAGpuPlanIsItself) {
  PlanSpec plan;
  plan.model = *load_model("tiny-llama");
  plan.seq_len = 1024;
  plan.knobs.sp = 2;
  plan.cluster.num_gpus = 2;
  plan.cluster.gpu = cpu_spec(1.0);
  plan.cluster.gpu.host_threads = 2;
  plan.cluster.gpu.gpus_per_node = 2;
  const PlanSpec priced = as_priced(plan);
  EXPECT_TRUE(priced.stack.priced_on_host_cpu);
  EXPECT_TRUE(priced.stack.cpu_flash_attention);
  EXPECT_EQ(priced.stack.cpu_flash_threads, 1);
  EXPECT_DOUBLE_EQ(priced.cluster.gpu.hbm_GBps, 20);
  EXPECT_DOUBLE_EQ(as_priced(priced).cluster.gpu.hbm_GBps, 20);
  // One rank alone on the CPU runs both threads at the measured rates: faster per step.
  PlanSpec alone = plan;
  alone.knobs.sp = 1;
  alone.cluster.num_gpus = 1;
  EXPECT_EQ(as_priced(alone).stack.cpu_flash_threads, 2);
  EXPECT_DOUBLE_EQ(as_priced(alone).cluster.gpu.hbm_GBps, 40);
  PlanSpec gpu = plan;
  gpu.cluster.gpu = *load_gpu("h100-80gb");
  EXPECT_FALSE(as_priced(gpu).stack.cpu_flash_attention);
  EXPECT_DOUBLE_EQ(as_priced(gpu).cluster.gpu.hbm_GBps, gpu.cluster.gpu.hbm_GBps);
}

}  // namespace
}  // namespace spplan::costmodel
