// What the costmodel predicts for the run the engine is about to make, for the report's
// "predicted_*" fields. The one place the engine calls planner/costmodel.
//
// The plan is priced on the accelerator the run has (Pricing):
// - on a GPU: `--gpu` (a preset or a calibrated file) when given, else the preset that matches the
//   device (match_gpu_preset), with every overhead term (CUDA context, NCCL, cuBLAS workspace,
//   fragmentation); a device that matches no preset is priced for memory only, on its capacity;
// - on a CPU: `--gpu` when given, else the preset "cpu-host" when configs/gpus/cpu-host.toml
//   exists (what `spplan calibrate --out` can write), else a spec with no CUDA context, NCCL or
//   fragmentation overheads and no known speed, in which case predicted_step_time_s is null.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

struct Prediction {
  // The peak the engine's memory meter measures: the allocator's allocated bytes (torch's
  // max_memory_allocated on CUDA, the counting allocator on a CPU). The costmodel's total less its
  // overhead (CUDA context, NCCL buffers, allocator slack), which no allocator counts; on a CPU the
  // overhead is 0. On the H100 (2026-11-26) comparing the total instead read +5.8 % at 16K for a run
  // whose allocated peak the costmodel priced to 0.0 %.
  std::optional<double> peak_memory_bytes;
  // Everything the step needs of the device, overhead included (the allocator slack it gives back
  // near the limit not: MemoryBreakdown::needed_bytes): what "fits" is judged on.
  std::optional<double> device_memory_bytes;
  std::optional<double> host_memory_bytes;  // per rank: the node's offloaded state / ranks on it
  std::optional<double> step_time_s;
  std::map<std::string, double> memory_bytes;  // the costmodel's categories: "params_bytes", ...
  // Compute seconds of one step by kernel class (kernel_clock.hpp's classes: gemm, attention_fwd,
  // attention_bwd, elementwise, loss, optimizer), summed from the costmodel's StepCosts; empty
  // when the speed is not known.
  std::map<std::string, double> kernel_classes_s;
  std::string machine;                         // which accelerator spec priced it
  // The costmodel's MFU times its step time (estimate.hpp: model FLOPs / (peak * time)): a measured
  // step of t seconds has MFU mfu_step_s / t. Absent when the machine's peak is unknown.
  std::optional<double> mfu_step_s;
};

// The work the costmodel counts in a plan's "elementwise" kernel class (kernel_classes_s): the
// bytes its kernels move and how many it launches in one step. calibrate divides the class's time,
// measured in the engine's own layer, by these bytes. nullopt when built without the costmodel.
struct ElementwiseWork {
  double bytes = 0;
  double kernels = 0;
};
std::optional<ElementwiseWork> elementwise_work(const PlanSpec& plan);

// The rates the costmodel prices one dtype's GEMMs (forward, backward: FLOP/s) and memory-bound
// kernels (bytes/s) at on `gpu`, its fallbacks applied (costmodel/compute.hpp); `validate engine`
// reports them. nullopt when built without the costmodel.
struct DtypeRates {
  double gemm_flops_per_s = 0;
  double gemm_bwd_flops_per_s = 0;
  double elementwise_bytes_per_s = 0;
};
std::optional<DtypeRates> priced_dtype_rates(const GpuSpec& gpu, double elem_bytes);

// The accelerator spec a run is priced on, and whether its speed is known (a datasheet preset or
// a measured calibration) or only its memory. On a CPU the ranks share it by the costmodel's one
// rule (planner/costmodel/host_cpu.hpp), at `threads_per_rank` threads (0: threads_per_rank()).
struct Pricing {
  GpuSpec gpu;
  bool speed_known = false;
  int64_t threads_per_rank = 0;
};

// A CUDA device as LibTorch reports it.
struct CudaDevice {
  std::string name;         // "NVIDIA H100 80GB HBM3"
  int64_t total_bytes = 0;  // 81559 MiB on an H100 SXM (what nvidia-smi shows)
};

// The preset for `device`: its model ("h100" of "h100-80gb") appears in the device's name and its
// memory_gib (nvidia-smi's figure) is within 2% of the device's memory. nullopt when none is.
std::optional<GpuSpec> match_gpu_preset(const CudaDevice& device, const std::vector<GpuSpec>& presets);

// GPU runs. `gpu_flag`: the spec --gpu named (nullptr: none).
Pricing cuda_pricing(const GpuSpec* gpu_flag, const CudaDevice& device, const GpuSpec& plan_gpu);
// CPU runs. `gpu_flag` likewise; else cpu-host, else the uncalibrated host. The ranks on the host
// share a spec that describes a CPU (costmodel as_priced, through priced_plan).
Pricing cpu_pricing(const GpuSpec* gpu_flag, const GpuSpec& plan_gpu);

// The threads each of `ranks_on_host` ranks runs (worker.cpp set_threads): OMP_NUM_THREADS when set
// to a positive count, else the host's hardware threads split between the ranks, at least 1.
int64_t threads_per_rank(int64_t ranks_on_host);

// The plan as the costmodel prices the engine's run of it: on `pricing`'s machine, every rank on
// one node, and the stack facts of this engine (its ZeRO-3 keeps nothing gathered, its loop holds no
// logits, its checkpoint offload keeps one layer input on the device); on a CPU, each rank's share
// of it at the run's threads (costmodel/host_cpu.hpp as_priced: the rule `spplan plan` prices a
// CPU by too). predict() prices this plan; `validate engine` searches its max-seq.
PlanSpec priced_plan(const PlanSpec& plan, const Pricing& pricing);

// REQUIRES: check_plan(plan) is ok; plan.cluster.num_gpus is the world size.
Prediction predict(const PlanSpec& plan, const Pricing& pricing);

}  // namespace spplan::engine
