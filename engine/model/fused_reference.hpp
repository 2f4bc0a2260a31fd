// The maths of the engine's fused layer ops, written once in plain ATen: the CPU path of each
// autograd op in fused_kernels.hpp, and what the CUDA kernels (engine/model/cuda/) are tested against.
// Forward and backward are separate functions on plain tensors (no autograd). Arithmetic is fp32
// in any dtype; what HF stores in the model dtype is rounded to it where HF rounds it (the
// normalised value before the weight multiplies it; the norm's output before RoPE).
//
// Shapes: rows are [rows, h] (any leading dims are flattened by the caller); q/k are
// [b, n, heads, d] (strided views allowed) with cos, sin [n, d/2] in the model dtype.
#pragma once

#include <ATen/core/Tensor.h>

namespace spplan::engine::reference {

struct NormForward {
  at::Tensor sum;   // residual + x (undefined without a residual)
  at::Tensor y;     // weight * round(sum * rstd)
  at::Tensor rstd;  // [rows, 1] fp32: 1 / sqrt(mean(sum^2) + eps)
};
struct NormBackward {
  at::Tensor dx;       // the gradient of x (and of the residual: the same tensor)
  at::Tensor dweight;  // in the weight's dtype
};

// residual may be undefined (a plain RMSNorm of x). x, residual: [rows, h].
NormForward add_rms_norm_forward(const at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight, double eps);
// dsum (the gradient reaching the sum from the residual stream) may be undefined. `sum`: what
// the forward normalised (its sum, or x without a residual).
NormBackward add_rms_norm_backward(const at::Tensor& dy, const at::Tensor& dsum, const at::Tensor& sum,
                                   const at::Tensor& weight, const at::Tensor& rstd);

// Rotate-half RoPE on x [b, n, heads, d] with cos, sin broadcastable to [b, n, heads, d/2]; in
// x's dtype, op for op as Hugging Face's apply_rotary_pos_emb (the engine's unfused path).
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

struct QkNormRopeForward {
  at::Tensor y;     // [b, n, heads, d], contiguous
  at::Tensor rstd;  // [b n heads, 1] fp32
};
QkNormRopeForward qk_norm_rope_forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                                       const at::Tensor& sin, double eps);
// RoPE's adjoint (in fp32), then the norm's backward. dx contiguous [b, n, heads, d].
NormBackward qk_norm_rope_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                   const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& rstd);

// silu(gate) * up for gate_up [rows, 2 ffn]; and the backward written over gate_up (dc [rows, ffn]).
at::Tensor swiglu_forward(const at::Tensor& gate_up);
void swiglu_backward_in_place(at::Tensor& gate_up, const at::Tensor& dc);

// One chunk of the tiled loss: logits [c, V] become d(sum of token losses)/d(logits) =
// softmax - one_hot(label) (zero on rows labelled kIgnoreLabel), with the softmax in fp32
// whatever the logits' dtype; token_loss [c] fp32 = logsumexp - target logit (0 when ignored).
void cross_entropy_grad_in_place(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss);

}  // namespace spplan::engine::reference
