#include "planner/costmodel/host_run.hpp"

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/host_cpu.hpp"

namespace spplan::costmodel {

GpuSpec this_cpu_host(const GpuSpec& fallback, bool* calibrated) {
  for (const std::string& name : gpu_presets()) {
    if (name != "cpu-host") continue;
    if (auto gpu = load_gpu(name); gpu.ok()) {
      *calibrated = true;
      return *gpu;
    }
  }
  *calibrated = false;
  GpuSpec g = fallback;
  g.name = "cpu-host (uncalibrated)";
  g.cuda_context_gib = 0;  // a CPU process has no CUDA context, NCCL buffers or caching allocator
  g.nccl_gib_per_group = 0;
  g.nccl_a2a_gib_per_peer = 0;
  g.gemm_workspace_mib = 0;  // CPU GEMMs take their scratch outside the counting allocator
  g.allocator_fragmentation = 0;
  return g;
}

std::string CpuRunMemory::words() const {
  return std::to_string(ranks) + (ranks == 1 ? " rank x " : " ranks x ") + format_number("%.1f", per_rank_bytes / kGiB) +
         " GiB + " + format_number("%.1f", offloaded_bytes / kGiB) + " GiB offloaded = " +
         format_number("%.1f", needed_bytes() / kGiB) + " GiB of " + format_number("%.1f", usable_bytes / kGiB) +
         " GiB usable RAM";
}

CpuRunMemory cpu_run_memory(const PlanSpec& plan, double ram_bytes) {
  const Estimate e = estimate(as_priced(plan));
  CpuRunMemory m;
  m.ranks = plan.cluster.num_gpus;
  m.per_rank_bytes = e.memory.total_bytes();
  m.offloaded_bytes = e.host.total_bytes();
  m.usable_bytes = usable_host_bytes(ram_bytes / kGiB);
  return m;
}

}  // namespace spplan::costmodel
