// The fused CUDA kernels (launch.hpp) on LibTorch tensors: the same functions, shapes and results
// as fused_reference.hpp, for CUDA tensors of fp32 or bf16, on the current stream. Compiled only
// when the build has the kernels (SPPLAN_ENGINE_CUDA_KERNELS; fused_kernels.hpp says whether).
// Inputs that are not laid out as a kernel reads them are made contiguous first.
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/model/fused_reference.hpp"

namespace spplan::engine::kernels {

reference::NormForward add_rms_norm_forward(const at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                                            double eps);
reference::NormBackward add_rms_norm_backward(const at::Tensor& dy, const at::Tensor& dsum, const at::Tensor& sum,
                                              const at::Tensor& weight, const at::Tensor& rstd);
reference::QkNormRopeForward qk_norm_rope_forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                                                  const at::Tensor& sin, double eps);
reference::NormBackward qk_norm_rope_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                              const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& rstd);
at::Tensor swiglu_forward(const at::Tensor& gate_up);
void swiglu_backward_in_place(at::Tensor& gate_up, const at::Tensor& dc);
void cross_entropy_grad_in_place(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss);

}  // namespace spplan::engine::kernels
