// planner/costmodel/host_run: a CPU run's ranks add their peaks in the machine's RAM.
#include "planner/costmodel/host_run.hpp"

#include <gtest/gtest.h>

#include "planner/core/units.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

TEST(CpuRun, RanksAddTheirPeaksBesideTheOffloadedState) {
  PlanSpec plan = testing::llama8b(2, 2, 4096);
  plan.model = load_model("qwen3-0.6b").value();
  plan.knobs.act_ckpt = ActCkpt::kFull;
  plan.knobs.offload_optimizer = OffloadDevice::kCpu;
  plan.knobs.zero_stage = 2;
  bool calibrated = true;
  plan.cluster.gpu = this_cpu_host(plan.cluster.gpu, &calibrated);
  if (!calibrated) {  // the uncalibrated host: the plan GPU's figures without its CUDA overheads
    EXPECT_EQ(plan.cluster.gpu.name, "cpu-host (uncalibrated)");
    EXPECT_EQ(plan.cluster.gpu.cuda_context_gib, 0);
    EXPECT_EQ(plan.cluster.gpu.allocator_fragmentation, 0);
  }
  plan.cluster.gpu.gpus_per_node = 2;
  const Estimate e = estimate(as_priced(plan));
  const CpuRunMemory m = cpu_run_memory(plan, 64 * kGiB);
  EXPECT_EQ(m.ranks, 2);
  EXPECT_DOUBLE_EQ(m.per_rank_bytes, e.memory.total_bytes());
  EXPECT_DOUBLE_EQ(m.offloaded_bytes, e.host.total_bytes());
  EXPECT_GT(m.offloaded_bytes, 0);  // the optimizer state on the CPU
  EXPECT_DOUBLE_EQ(m.needed_bytes(), 2 * e.memory.total_bytes() + e.host.total_bytes());
  EXPECT_DOUBLE_EQ(m.usable_bytes, usable_host_bytes(64));  // 64 GiB less the OS's 8
  EXPECT_TRUE(m.fits());
  const CpuRunMemory small = cpu_run_memory(plan, 8 * kGiB + m.needed_bytes() / 2);
  EXPECT_FALSE(small.fits());
  EXPECT_EQ(small.words().rfind("2 ranks x ", 0), 0u) << small.words();
}

}  // namespace
}  // namespace spplan::costmodel
