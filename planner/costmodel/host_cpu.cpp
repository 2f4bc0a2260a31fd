#include "planner/costmodel/host_cpu.hpp"

#include <algorithm>
#include <cmath>

namespace spplan::costmodel {

bool describes_host_cpu(const GpuSpec& spec) { return spec.cuda_context_gib == 0 && spec.nccl_gib_per_group == 0; }

double amdahl_speedup(double threads, double measured_threads, double measured_speedup) {
  if (!(measured_threads > 1) || !(measured_speedup > 0)) return threads;  // nothing measured: linear
  const double parallel = std::clamp((1 - 1 / measured_speedup) / (1 - 1 / measured_threads), 0.0, 1.0);
  return 1 / ((1 - parallel) + parallel / threads);
}

int64_t default_threads_per_rank(const GpuSpec& machine, int64_t ranks) {
  const auto threads = static_cast<int64_t>(std::floor(machine.host_threads / static_cast<double>(std::max<int64_t>(1, ranks))));
  return std::max<int64_t>(1, threads);
}

GpuSpec host_share(const GpuSpec& machine, int64_t ranks, int64_t threads_per_rank) {
  GpuSpec spec = machine;
  const double w = static_cast<double>(std::max<int64_t>(1, ranks));
  // Each class's share of its measured rate; without host_threads (not measured), 1/ranks.
  double linear = 1 / w, fp32_fwd = 1 / w, fp32_bwd = 1 / w, bf16_fwd = 1 / w, bf16_bwd = 1 / w;
  if (machine.host_threads > 0) {
    const double cores = machine.host_threads;
    const double threads = static_cast<double>(std::max<int64_t>(1, threads_per_rank));
    const double busy = std::min(1.0, cores / (w * threads));
    linear = std::min(threads, cores) / cores * busy;
    // A GEMM class by Amdahl's law through its measured speedup (absent: the fp32 forward's; that
    // absent too: linear).
    const double fallback = machine.matmul_thread_speedup > 0 ? machine.matmul_thread_speedup : cores;
    auto gemm = [&](double measured) {
      const double speedup = measured > 0 ? measured : fallback;
      return amdahl_speedup(std::min(threads, cores), cores, speedup) / amdahl_speedup(cores, cores, speedup) * busy;
    };
    fp32_fwd = gemm(machine.matmul_thread_speedup), fp32_bwd = gemm(machine.matmul_bwd_thread_speedup);
    bf16_fwd = gemm(machine.bf16_matmul_thread_speedup), bf16_bwd = gemm(machine.bf16_matmul_bwd_thread_speedup);
  }
  // Per dtype the peak takes the largest share and each class's efficiency the ratio, so every
  // efficiency stays a fraction of peak (a calibrated file's fastest class is at 1). A backward
  // efficiency of 0 (not measured) stays 0: it runs at the forward's.
  const double fp32_peak = std::max({linear, fp32_fwd, fp32_bwd}), bf16_peak = std::max({linear, bf16_fwd, bf16_bwd});
  spec.fp32_tflops *= fp32_peak;
  spec.bf16_tflops *= bf16_peak;
  spec.fp32_matmul_efficiency *= fp32_fwd / fp32_peak;
  spec.fp32_matmul_bwd_efficiency *= fp32_bwd / fp32_peak;
  spec.matmul_efficiency *= bf16_fwd / bf16_peak;
  spec.matmul_bwd_efficiency *= bf16_bwd / bf16_peak;
  for (double* e : {&spec.attention_efficiency, &spec.attention_bwd_efficiency, &spec.sdpa_attention_efficiency,
                    &spec.sdpa_attention_bwd_efficiency}) {
    *e *= linear / bf16_peak;
  }
  for (double* e : {&spec.fp32_attention_efficiency, &spec.fp32_attention_bwd_efficiency}) *e *= linear / fp32_peak;
  spec.hbm_GBps *= linear;
  spec.pcie_GBps *= linear;
  return spec;
}

bool needs_host_pricing(const PlanSpec& plan) {
  return !plan.stack.priced_on_host_cpu && describes_host_cpu(plan.cluster.gpu);
}

PlanSpec as_priced(const PlanSpec& plan) {
  if (!needs_host_pricing(plan)) return plan;
  PlanSpec p = plan;
  const int64_t ranks = std::min(p.cluster.num_gpus, p.cluster.gpu.gpus_per_node);
  const int64_t threads =
      p.stack.cpu_flash_threads > 0 ? p.stack.cpu_flash_threads : default_threads_per_rank(p.cluster.gpu, ranks);
  p.cluster.gpu = host_share(p.cluster.gpu, ranks, threads);
  p.stack.cpu_flash_attention = true;
  p.stack.cpu_flash_threads = threads;
  // There the tiled loss's layer ops run their blockwise ATen references (fused_reference.cpp), a
  // chain of kernels per op like the eager modules, not the fused CUDA kernels; and LibTorch's fp32
  // rms_norm is its composite, which keeps the normalised value too.
  p.stack.fused_layer_kernels_with_tiled_loss = false;
  p.stack.fp32_norms_fused_on_gpu = false;
  p.stack.priced_on_host_cpu = true;
  return p;
}

}  // namespace spplan::costmodel
