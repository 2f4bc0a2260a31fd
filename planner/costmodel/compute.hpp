// Time of compute kernels on one GPU: a roofline (the slower of FLOPs at an achievable fraction
// of peak and bytes at HBM bandwidth) plus a fixed launch cost, so small work runs at lower
// efficiency than large work. Seconds.
#pragma once

#include <functional>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// [m x k] @ [k x n] with elements of `elem_bytes` (inputs read once, output written once).
double gemm_time_s(const GpuSpec& gpu, double m, double n, double k, double elem_bytes);
// The backward of that GEMM: the input gradient [m x n] @ [n x k] and the weight gradient
// [n x m] @ [m x k], twice its FLOPs at the backward's rate (GpuSpec::matmul_bwd_efficiency).
double gemm_bwd_time_s(const GpuSpec& gpu, double m, double n, double k, double elem_bytes);
// `kernels` memory-bound kernels on `elem_bytes` elements that read + write `bytes` in total, at
// the HBM rate such kernels reach in that dtype (elementwise_efficiency, fp32_elementwise_efficiency),
// each with its launch cost.
double elementwise_time_s(const GpuSpec& gpu, double bytes, double elem_bytes, double kernels = 1);
// The rates the three above price with on `elem_bytes` operands: a GEMM's compute-bound FLOP/s
// forward and backward (the backward's own fraction, else the forward's), and the bytes per second
// of memory-bound kernels (the dtype's own fraction of HBM, else the bf16 one).
double gemm_flops_per_s(const GpuSpec& gpu, double elem_bytes);
double gemm_bwd_flops_per_s(const GpuSpec& gpu, double elem_bytes);
double elementwise_bytes_per_s(const GpuSpec& gpu, double elem_bytes);
// Blockwise attention (`kernel`'s rates on this GPU): forward FLOPs `fwd_flops` (the pairs the
// kernel computes, diagonal tiles and bias included: attention_cost_pairs); the backward executes
// 2.5x of them.
double attention_fwd_time_s(const GpuSpec& gpu, AttentionKernel kernel, double fwd_flops, double elem_bytes);
double attention_bwd_time_s(const GpuSpec& gpu, AttentionKernel kernel, double fwd_flops, double elem_bytes);

// Query-key pairs of one head's causal attention over the first `n` queries of a sequence: n^2 / 2,
// or with a sliding `window` (> 0) each query's last `window` keys only, n w - w^2 / 2 once n > w.
// Queries [a, b) attend to causal_pairs(b) - causal_pairs(a) pairs (a ring rank's shard).
double causal_pairs(double n, double window = 0);
// Query-key pairs one head's kernel computes over `n` causal queries with a sliding `window` (0:
// none): causal_pairs where it skips what the window leaves out (FlashAttention's window_size); a
// stack that runs the window in masked blocks (TrainingStack::window_in_masked_blocks: the
// engine's window_attention.hpp) computes the first block's w^2 / 2 and each later block's
// n_j (n_j + w - 1) pairs, masked ones included.
double computed_window_pairs(const TrainingStack& stack, double n, double window);
// The kernel calls that takes: ceil(n / w) masked blocks, else 1.
int64_t window_attention_calls(const TrainingStack& stack, double n, double window);
// Query rows of those calls that a causal mask crosses, each paying the kernel's tiles past its
// diagonal whole (GpuSpec::attention_causal_extra_keys): all n in one causal call, twice for the rows
// past a window the kernel applies (its first tile is cut too); in masked blocks the first block's
// w only (the later ones are non-causal calls under a band bias, their masked pairs counted above).
double diagonal_rows(const TrainingStack& stack, double n, double window);
// Pairs of those calls computed under an additive bias: in masked blocks all but the causal first
// block's (GpuSpec::attention_bias_extra_pairs); none where the kernel masks by itself.
double biased_pairs(const TrainingStack& stack, double n, double window);
// One head's attention on the slowest rank for its kernel's cost: the pairs computed, the rows a
// causal mask crosses, and the pairs computed under an additive bias (of those pairs).
struct AttentionWork {
  double pairs = 0, diagonal_rows = 0, biased_pairs = 0;
};
// Its cost in pairs at the non-causal rate: `extra_keys` more a diagonal row, `bias_extra` more a
// biased pair (GpuSpec::attention_causal_extra_keys, attention_bias_extra_pairs: forward or backward).
double attention_cost_pairs(const AttentionWork& work, double extra_keys, double bias_extra);
// Forward FLOPs of `pairs` query-key pairs for `heads` heads of `head_dim`, `batch` sequences.
double attention_pairs_fwd_flops(double pairs, double heads, double head_dim, double batch);
// Causal attention forward FLOPs of one rank: QK^T and PV over `seq` tokens for `heads` heads of
// `head_dim`, `batch` sequences, causal_pairs(seq, window) pairs each.
double causal_attention_fwd_flops(double seq, double heads, double head_dim, double batch, double window = 0);
// One layer's attention forward FLOPs averaged over the model's layers: its windowed layers
// (ModelSpec::windowed_layers) over the window, the others full causal (Gemma 3, gpt-oss). The
// costmodel prices every layer alike, so a step's attention is this times the layer count.
double layer_attention_fwd_flops(const ModelSpec& model, double seq, double heads, double batch);
// `of(window)` averaged over the model's layers: of(sliding_window) for its windowed layers, of(0)
// for the others (the one place layer_attention_fwd_flops and a ring rank's share weigh the kinds).
double mean_over_attention_layers(const ModelSpec& model, const std::function<double(double window)>& of);

}  // namespace spplan::costmodel
