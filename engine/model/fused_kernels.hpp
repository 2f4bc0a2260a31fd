// Fused layer ops the engine uses with --tiled-loss, the counterparts of what Liger-Kernel's
// apply_liger_kernel installs next to its fused linear cross-entropy (MEMORY-FACTS 8.2 "with
// Liger"). They change what a layer keeps for backward, which is what the costmodel prices:
//
//   RMSNorm (with the residual add before it, or alone): keeps its input (the sum) and one fp32
//            reciprocal RMS per token (rstd); eager at::rms_norm keeps the intermediate products
//            of its composite ops instead. Its arithmetic is fp32 in any dtype (Liger's "llama"
//            casting).
//   q/k RMSNorm + RoPE (qk_norm models): keeps the q or k input and rstd, as Liger's RMSNorm on
//            q_norm / k_norm followed by its RoPE (which keeps nothing but the tables).
//   SwiGLU:  keeps gate and up only and recomputes SiLU in backward, writing d(gate) and d(up)
//            over the saved gate/up buffer, so backward adds no i-wide tensor besides the
//            gradient of down_proj's input.
//
// Each is a custom autograd op. Its maths is written once in fused_reference.hpp (plain ATen: the
// CPU path, and any device without the kernels); on CUDA tensors of fp32 or bf16, when the build
// has the fused CUDA kernels (engine/model/cuda/), the kernels run instead: one pass over HBM per tensor.
// SPPLAN_ENGINE_FUSED_KERNELS=aten forces the ATen path on a GPU (to measure the kernels' effect;
// auto, the default, is the rule above; options.cpp refuses any other value).
#pragma once

#include <utility>

#include <ATen/core/Tensor.h>

namespace spplan::engine {

// Whether this build has the fused CUDA kernels (CMake option SPPLAN_ENGINE_CUDA_KERNELS).
bool cuda_kernels_built();
// Which implementation the ops run for tensors on `device` in this process: "cuda" (the fused
// kernels) or "aten" (fused_reference.hpp). For the report.
const char* fused_kernels_path(const at::Device& device);

// weight * x / sqrt(mean(x^2, last dim) + eps), saving only x and rstd for backward.
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// {residual + x, rms_norm(residual + x) * weight} in one pass, saving only the sum and rstd. The
// sum's gradient is the same tensor for residual and x.
std::pair<at::Tensor, at::Tensor> fused_add_rms_norm(const at::Tensor& residual, const at::Tensor& x,
                                                     const at::Tensor& weight, double eps);

// Per-head RMSNorm (weight [d]) then rotate-half RoPE of x [b, n, heads, d] (a strided view of
// the q/k/v GEMM output is fine); cos, sin: [n, d/2]. Returns a contiguous [b, n, heads, d].
at::Tensor fused_qk_norm_rope(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                              const at::Tensor& sin, double eps);

// silu(gate) * up for gate_up = [gate | up] stacked on the last dim ([..., 2 i] -> [..., i]),
// saving only gate_up. gate_up must be contiguous and must not be needed after backward (it is a
// GEMM output here): backward overwrites it with the gradient, so a second backward through the
// same graph fails.
at::Tensor fused_swiglu(const at::Tensor& gate_up);

// The model's RMSNorm: the fused one when `fused`; else at::rms_norm in fp32 and Hugging Face's
// eager RMSNorm (fp32 upcast inside) in bf16.
at::Tensor rms_normalize(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused);

// The tiled loss's per-chunk cross-entropy (fused_reference.hpp), on the kernel where it runs.
void cross_entropy_grad(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss);

}  // namespace spplan::engine
