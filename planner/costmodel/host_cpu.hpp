// A CPU as the costmodel's accelerator: what `spplan calibrate` measures on one (a GpuSpec with no
// CUDA context and no NCCL buffers) and how the ranks that share it divide it. `spplan plan`,
// `estimate`, the simulator, `spplan run` and `validate engine` price a CPU plan through as_priced
// alone, so that a plan and the run of it agree on a rank's threads (before, `plan` gave every
// rank the whole CPU, 0.78 s a step against the run's 1.58 s prediction).
//
// The rule for R ranks on one CPU of T hardware threads: each rank runs t = max(1, T / R) threads
// (the engine's worker.cpp set_threads; OMP_NUM_THREADS overrides it, and then the run prices
// its own count), each thread gets min(1, T / (R t)) of a core, and a kernel class's rate is its
// measured rate scaled by its speedup at t threads over its speedup at T: attention, elementwise
// kernels and copies (a memory copy: the same shared bandwidth) linearly, each GEMM class (dtype,
// forward or backward) by Amdahl's law through its measured thread speedup (GpuSpec
// matmul_thread_speedup and its siblings). A spec without host_threads (not measured by
// calibrate): 1/R of everything. Memory capacity is not divided: the costmodel prices one rank's peak.
#pragma once

#include <cstdint>

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// A spec of a CPU (no CUDA context, no NCCL buffers), not of a GPU.
bool describes_host_cpu(const GpuSpec& spec);

// Amdahl's law: the speedup at `threads` of a kernel whose speedup at `measured_threads` is
// `measured_speedup` (its parallel fraction solved from that point, kept in [0, 1]).
double amdahl_speedup(double threads, double measured_threads, double measured_speedup);

// The threads each of `ranks` ranks runs when nothing says otherwise: max(1, host_threads / ranks).
int64_t default_threads_per_rank(const GpuSpec& machine, int64_t ranks);

// One rank's share of `machine` when `ranks` ranks of `threads_per_rank` threads share it (above).
GpuSpec host_share(const GpuSpec& machine, int64_t ranks, int64_t threads_per_rank);

// The plan as the costmodel prices it: on a GPU, itself; on a host CPU, each rank's share of the
// machine (host_share over the ranks on the node, min(num_gpus, gpus_per_node), at
// stack.cpu_flash_threads threads, or default_threads_per_rank when that is 0), LibTorch's CPU flash
// kernel for attention, and the layer ops as the CPU runs them (no fused CUDA kernels, the composite
// fp32 rms_norm). Idempotent (stack.priced_on_host_cpu): estimate, step_costs and the simulator
// each call it, and a plan already priced passes through unchanged.
PlanSpec as_priced(const PlanSpec& plan);
// True when as_priced would change the plan: a host CPU not priced yet. The hot paths (estimate,
// step_costs) copy the plan only then.
bool needs_host_pricing(const PlanSpec& plan);

}  // namespace spplan::costmodel
