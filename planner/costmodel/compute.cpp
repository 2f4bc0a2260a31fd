#include "planner/costmodel/compute.hpp"

#include <algorithm>
#include <cmath>

#include "planner/core/units.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

bool runs_fp32(const GpuSpec& g, double elem_bytes) { return elem_bytes >= 4 && g.fp32_tflops > 0; }

// The fraction of that peak a kernel class reaches in the operands' dtype: fp32 has its own
// (GpuSpec::fp32_*), measured by `spplan calibrate`; 0 means none was given (the bf16 one).
double in_dtype(const GpuSpec& g, double elem_bytes, double bf16_efficiency, double fp32_efficiency) {
  return runs_fp32(g, elem_bytes) && fp32_efficiency > 0 ? fp32_efficiency : bf16_efficiency;
}

// 4-byte operands run on the fp32 units (PyTorch does not use TF32 for fp32 matmuls by default);
// 2-byte ones on the bf16 tensor cores.
double peak_flops(const GpuSpec& g, double elem_bytes) {
  return (runs_fp32(g, elem_bytes) ? g.fp32_tflops : g.bf16_tflops) * kTera;
}
// `gemms` GEMMs of [m x k] @ [k x n] shapes (any layout) at `flops_per_s`: the slower of their
// FLOPs and their bytes (inputs read once, output written once), plus a fixed cost each.
double gemms_time_s(const GpuSpec& g, double gemms, double m, double n, double k, double elem_bytes,
                    double flops_per_s) {
  const double flops = gemms * 2.0 * m * n * k;
  const double bytes = gemms * elem_bytes * (m * k + k * n + m * n);
  return std::max(flops / flops_per_s, bytes / elementwise_bytes_per_s(g, elem_bytes)) + gemms * g.matmul_fixed_s;
}

}  // namespace

double gemm_flops_per_s(const GpuSpec& g, double elem_bytes) {
  return peak_flops(g, elem_bytes) * in_dtype(g, elem_bytes, g.matmul_efficiency, g.fp32_matmul_efficiency);
}

double gemm_bwd_flops_per_s(const GpuSpec& g, double elem_bytes) {
  // The dtype's own backward fraction; without one, its forward's (in_dtype's rule for fp32).
  const bool fp32_own = runs_fp32(g, elem_bytes) && g.fp32_matmul_efficiency > 0;
  const double backward = fp32_own ? g.fp32_matmul_bwd_efficiency : g.matmul_bwd_efficiency;
  return backward > 0 ? peak_flops(g, elem_bytes) * backward : gemm_flops_per_s(g, elem_bytes);
}

double elementwise_bytes_per_s(const GpuSpec& g, double elem_bytes) {
  return g.hbm_GBps * kGB * in_dtype(g, elem_bytes, g.elementwise_efficiency, g.fp32_elementwise_efficiency);
}

double gemm_time_s(const GpuSpec& g, double m, double n, double k, double elem_bytes) {
  return gemms_time_s(g, 1, m, n, k, elem_bytes, gemm_flops_per_s(g, elem_bytes));
}

double gemm_bwd_time_s(const GpuSpec& g, double m, double n, double k, double elem_bytes) {
  return gemms_time_s(g, 2, m, n, k, elem_bytes, gemm_bwd_flops_per_s(g, elem_bytes));
}

double elementwise_time_s(const GpuSpec& g, double bytes, double elem_bytes, double kernels) {
  return bytes / elementwise_bytes_per_s(g, elem_bytes) + kernels * g.kernel_launch_s;
}

// FlashAttention 3 runs at the flash rates: no GPU file measures its own (its paper, arXiv
// 2407.08608, reports 1.5-2x FlashAttention 2's forward on the H100), so its steps err slow.
// flex_attention runs at its published share of FlashAttention 2's (software_facts.hpp).
double attention_fwd_time_s(const GpuSpec& g, AttentionKernel kernel, double fwd_flops, double elem_bytes) {
  const double share = kernel == AttentionKernel::kFlex ? facts::kFlexFwdShareOfFlash2 : 1.0;
  const double efficiency =
      share * in_dtype(g, elem_bytes, kernel == AttentionKernel::kSdpa ? g.sdpa_attention_efficiency : g.attention_efficiency,
                       g.fp32_attention_efficiency);
  const double fixed_s = kernel == AttentionKernel::kSdpa ? g.sdpa_attention_fixed_s : g.attention_fixed_s;
  return fwd_flops / (peak_flops(g, elem_bytes) * efficiency) + fixed_s;
}

double attention_bwd_time_s(const GpuSpec& g, AttentionKernel kernel, double fwd_flops, double elem_bytes) {
  const double share = kernel == AttentionKernel::kFlex ? facts::kFlexBwdShareOfFlash2 : 1.0;
  const double efficiency = share * in_dtype(
      g, elem_bytes, kernel == AttentionKernel::kSdpa ? g.sdpa_attention_bwd_efficiency : g.attention_bwd_efficiency,
      g.fp32_attention_bwd_efficiency);
  const double fixed_s = kernel == AttentionKernel::kSdpa ? g.sdpa_attention_bwd_fixed_s : g.attention_bwd_fixed_s;
  return facts::kAttentionBwdFlopsFactor * fwd_flops / (peak_flops(g, elem_bytes) * efficiency) + fixed_s;
}

double causal_pairs(double n, double window) {
  // Causal: query i sees keys 0..i, n^2 / 2 pairs in the continuum. A window of w keys (each query
  // sees its last w, itself included: transformers' sliding_window_overlay, FlashAttention's
  // window_size (w - 1, 0)): the first w queries as causal, each later one w keys, n w - w^2 / 2;
  // FlashAttention skips the key blocks wholly outside the window (flash_fwd_kernel.h n_block_min).
  return window > 0 && n > window ? n * window - window * window / 2.0 : n * n / 2.0;
}

namespace {
bool runs_masked_blocks(const TrainingStack& stack, double n, double window) {
  return stack.window_in_masked_blocks && window > 0 && n > window;
}
}  // namespace

double computed_window_pairs(const TrainingStack& stack, double n, double window) {
  if (!runs_masked_blocks(stack, n, window)) return causal_pairs(n, window);
  const double blocks = std::ceil(n / window), last = n - (blocks - 1) * window;
  return window * window / 2.0 + (blocks - 2) * window * (2 * window - 1) + last * (last + window - 1);
}

int64_t window_attention_calls(const TrainingStack& stack, double n, double window) {
  return runs_masked_blocks(stack, n, window) ? static_cast<int64_t>(std::ceil(n / window)) : 1;
}

double diagonal_rows(const TrainingStack& stack, double n, double window) {
  if (runs_masked_blocks(stack, n, window)) return window;
  return window > 0 && n > window ? n + (n - window) : n;
}

double biased_pairs(const TrainingStack& stack, double n, double window) {
  return runs_masked_blocks(stack, n, window) ? computed_window_pairs(stack, n, window) - window * window / 2.0 : 0.0;
}

double attention_cost_pairs(const AttentionWork& w, double extra_keys, double bias_extra) {
  return w.pairs + w.diagonal_rows * extra_keys + w.biased_pairs * bias_extra;
}

double attention_pairs_fwd_flops(double pairs, double heads, double head_dim, double batch) {
  return batch * heads * 2.0 * 2.0 * head_dim * pairs;  // 2 matmuls (QK^T, PV) of 2 d FLOPs a pair and head
}

double causal_attention_fwd_flops(double seq, double heads, double head_dim, double batch, double window) {
  return attention_pairs_fwd_flops(causal_pairs(seq, window), heads, head_dim, batch);
}

double mean_over_attention_layers(const ModelSpec& m, const std::function<double(double)>& of) {
  const double layers = static_cast<double>(m.num_hidden_layers), windowed = static_cast<double>(m.windowed_layers());
  const double windowed_part = windowed > 0 ? windowed * of(static_cast<double>(m.sliding_window)) : 0.0;
  return (windowed_part + (layers - windowed) * of(0.0)) / layers;
}

double layer_attention_fwd_flops(const ModelSpec& m, double seq, double heads, double batch) {
  const double d = static_cast<double>(m.head_dim);
  return mean_over_attention_layers(m, [&](double window) { return causal_attention_fwd_flops(seq, heads, d, batch, window); });
}

}  // namespace spplan::costmodel
