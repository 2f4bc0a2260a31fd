// A run with every rank on this one machine's CPU (`spplan run` without a GPU, the GUI's Run tab):
// the machine it is priced on, and whether the machine's RAM holds it. On a CPU each rank's
// "device" memory is RAM too, beside the offloaded state, so the ranks' peaks add up where a GPU
// node's would not (the costmodel prices one rank's peak: host_cpu.hpp).
#pragma once

#include <string>

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// The spec a CPU run is priced on: the preset "cpu-host" (configs/gpus/cpu-host.toml, what
// `spplan calibrate --out` writes) when there is one (*calibrated = true), else `fallback`'s
// figures with no CUDA context, NCCL buffers, cuBLAS workspace or allocator slack, and no known
// speed (*calibrated = false).
GpuSpec this_cpu_host(const GpuSpec& fallback, bool* calibrated);

// What a CPU run needs of the machine's RAM.
struct CpuRunMemory {
  int64_t ranks = 0;
  double per_rank_bytes = 0;  // each rank's peak (its "device" memory)
  double offloaded_bytes = 0; // the node's offloaded state (host memory per node)
  double usable_bytes = 0;    // the RAM less the OS's reserve (estimate.hpp usable_host_bytes)
  double needed_bytes() const { return static_cast<double>(ranks) * per_rank_bytes + offloaded_bytes; }
  bool fits() const { return needed_bytes() <= usable_bytes; }
  // "4 ranks x 5.2 GiB + 1.0 GiB offloaded = 21.8 GiB of 21.6 GiB usable (24.0 GiB RAM less the
  // OS's reserve)".
  std::string words() const;
};

// `plan` (its ranks all here, priced by as_priced on a CPU spec) against `ram_bytes` of RAM.
// REQUIRES: check_plan(plan) is ok.
CpuRunMemory cpu_run_memory(const PlanSpec& plan, double ram_bytes);

}  // namespace spplan::costmodel
