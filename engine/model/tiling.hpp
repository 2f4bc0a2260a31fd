// Sequence tiling of the two places where per-token memory is widest (ALST's tiled compute):
//
// Tiled loss (--tiled-loss), the algorithm of Liger-Kernel's fused linear cross-entropy: the
// forward walks the tokens in chunks, computes a chunk's logits, its token losses and at once the
// gradient of the loss sum with respect to the chunk's hidden states and to the head weight, and
// drops the logits before the next chunk. Only [chunk, V] logits ever exist; grad_input [T, h]
// and grad_weight [V, h] are kept until backward, which only multiplies them by the incoming
// gradient (a scalar). In bf16, as Liger: bf16 logits from a bf16 GEMM, the softmax in fp32,
// grad_input and grad_weight in bf16, token losses in fp32.
//
// Tiled MLP (--tiled-mlp), DeepSpeed's TiledMLP: the MLP (gate_up -> SwiGLU -> down) runs over
// ceil(n / h) slices of the local sequence. The forward keeps none of a slice's intermediates; the
// backward recomputes one slice at a time and differentiates it, so only one slice's
// intermediates exist at once.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "planner/config/knobs.hpp"

namespace spplan::engine {

// Liger's chunk size for T tokens, hidden h and vocabulary V: T / ceil(V / h) tokens rounded up
// to a power of two, so a chunk's logits hold about as many elements as the hidden states (up to
// twice as many through the rounding).
int64_t loss_chunk_tokens(int64_t tokens, int64_t hidden, int64_t vocab);

// Sum over tokens of the cross-entropy of hidden [T, h] @ weight[V, h]^T against labels [T]
// (tokens labelled kIgnoreLabel count for nothing), without materialising [T, V] logits.
// `chunk_tokens` 0: loss_chunk_tokens(). Differentiable once in hidden and weight (the stored
// gradients are scaled in place; a second backward is refused).
at::Tensor fused_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels,
                                      int64_t chunk_tokens = 0);

// DeepSpeed's shard count for n local tokens and hidden size h: ceil(n / h).
int64_t mlp_shards(int64_t tokens, int64_t hidden);

struct MlpOptions {
  bool fused_swiglu = false;  // fused_kernels.hpp's SwiGLU (on with --tiled-loss, as Liger's)
  int64_t shards = 1;         // > 1: TiledMLP over that many slices of dim 1
};
// The run's MLP settings for a layer input of n local tokens per sequence.
MlpOptions mlp_options(const Knobs& knobs, int64_t tokens, int64_t hidden);

// down(SwiGLU(x @ w_gate_up^T)) on x [b, n, h]; w_gate_up [2 i, h] (gate then up), w_down [h, i].
at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& w_gate_up, const at::Tensor& w_down, const MlpOptions& o);

}  // namespace spplan::engine
