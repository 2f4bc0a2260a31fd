// Fused layer kernels the engine uses with --tiled-loss, the counterparts of what Liger-Kernel's
// apply_liger_kernel installs next to its fused linear cross-entropy (MEMORY-FACTS 8.2 "with
// Liger"). They change what a layer keeps for backward, which is what the costmodel prices:
//
//   RMSNorm: keeps its input and one fp32 reciprocal RMS per token (rstd); eager at::rms_norm
//            keeps the intermediate products of its composite ops instead. Its arithmetic is
//            fp32 in any dtype (Liger's "llama" casting), in blocks of rows.
//   SwiGLU:  keeps gate and up only and recomputes SiLU in backward, writing d(gate) and d(up)
//            over the saved gate/up buffer, so backward adds no i-wide tensor besides the
//            gradient of down_proj's input.
//
// Both are plain ATen ops inside custom autograd Functions (they run on any device); the
// "fusion" here is about memory, not about kernel launches.
#pragma once

#include <ATen/core/Tensor.h>

namespace spplan::engine {

// weight * x / sqrt(mean(x^2, last dim) + eps), saving only x and rstd for backward.
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// silu(gate) * up for gate_up = [gate | up] stacked on the last dim ([..., 2 i] -> [..., i]),
// saving only gate_up. gate_up must be contiguous and must not be needed after backward (it is a
// GEMM output here): backward overwrites it with the gradient, so a second backward through the
// same graph fails.
at::Tensor fused_swiglu(const at::Tensor& gate_up);

// The model's RMSNorm: the fused one when `fused`; else at::rms_norm in fp32 and Hugging Face's
// eager RMSNorm (fp32 upcast inside) in bf16.
at::Tensor rms_normalize(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused);

}  // namespace spplan::engine
