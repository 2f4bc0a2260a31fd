#include "engine/model/fused_kernels.hpp"

#include <cstdlib>
#include <cstring>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/model/fused_reference.hpp"
#ifndef SPPLAN_ENGINE_CUDA_KERNELS
#define SPPLAN_ENGINE_CUDA_KERNELS 0  // CMake defines it to 1 when it builds engine/model/cuda/
#endif
#if SPPLAN_ENGINE_CUDA_KERNELS
#include "engine/model/cuda/fused_cuda.hpp"
#endif

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// SPPLAN_ENGINE_FUSED_KERNELS=aten: the reference even where the kernels could run.
bool kernels_disabled() {
  static const bool disabled = [] {
    const char* v = std::getenv("SPPLAN_ENGINE_FUSED_KERNELS");
    return v != nullptr && std::strcmp(v, "aten") == 0;
  }();
  return disabled;
}

[[maybe_unused]] bool on_kernel(const at::Tensor& t) {  // unused when the kernels are not built
  return cuda_kernels_built() && !kernels_disabled() && t.is_cuda() &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
}

// The implementation for `t`: the CUDA kernels or the ATen reference, with the same signatures.
#if SPPLAN_ENGINE_CUDA_KERNELS
#define SPPLAN_FUSED_CALL(t, fn, ...) (on_kernel(t) ? kernels::fn(__VA_ARGS__) : reference::fn(__VA_ARGS__))
#else
#define SPPLAN_FUSED_CALL(t, fn, ...) reference::fn(__VA_ARGS__)
#endif

// Functions that overwrite their saved tensors in backward can run backward once; a second call
// (retain_graph) would read gradients where inputs used to be. Fail loudly instead.
void mark_backward_done(AutogradContext* ctx, const char* who) {
  TORCH_CHECK(!ctx->saved_data.count("done"), who, ": backward ran twice (its saved tensors are overwritten in place)");
  ctx->saved_data["done"] = true;
}

struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, double eps) {
    reference::NormForward f = SPPLAN_FUSED_CALL(x, add_rms_norm_forward, at::Tensor(), x, weight, eps);
    ctx->save_for_backward({x, weight, f.rstd});
    return f.y.view(x.sizes());
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list saved = ctx->get_saved_variables();
    const reference::NormBackward b =
        SPPLAN_FUSED_CALL(saved[0], add_rms_norm_backward, grad[0], at::Tensor(), saved[0], saved[1], saved[2]);
    return {b.dx.view(saved[0].sizes()), b.dweight, at::Tensor()};
  }
};

struct FusedAddRmsNorm : torch::autograd::Function<FusedAddRmsNorm> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& residual, const at::Tensor& x,
                               const at::Tensor& weight, double eps) {
    reference::NormForward f = SPPLAN_FUSED_CALL(x, add_rms_norm_forward, residual, x, weight, eps);
    const at::Tensor sum = f.sum.view(x.sizes());
    ctx->save_for_backward({sum, weight, f.rstd});
    return {sum, f.y.view(x.sizes())};
  }
  // grad: {d sum (the residual stream), d y}; either may be undefined (unused output).
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor dy = grad[1].defined() ? grad[1] : at::zeros_like(saved[0]);
    const reference::NormBackward b =
        SPPLAN_FUSED_CALL(saved[0], add_rms_norm_backward, dy, grad[0], saved[0], saved[1], saved[2]);
    const at::Tensor dx = b.dx.view(saved[0].sizes());
    return {dx, dx, b.dweight, at::Tensor()};
  }
};

struct FusedQkNormRope : torch::autograd::Function<FusedQkNormRope> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                            const at::Tensor& sin, double eps) {
    reference::QkNormRopeForward f = SPPLAN_FUSED_CALL(x, qk_norm_rope_forward, x, weight, cos, sin, eps);
    ctx->save_for_backward({x, weight, cos, sin, f.rstd});
    return f.y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list s = ctx->get_saved_variables();
    const reference::NormBackward b = SPPLAN_FUSED_CALL(s[0], qk_norm_rope_backward, grad[0], s[0], s[1], s[2], s[3], s[4]);
    return {b.dx, b.dweight, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct FusedSwiGlu : torch::autograd::Function<FusedSwiGlu> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate_up) {
    TORCH_CHECK(gate_up.is_contiguous(), "fused_swiglu: gate_up must be contiguous");
    ctx->save_for_backward({gate_up});
    return SPPLAN_FUSED_CALL(gate_up, swiglu_forward, gate_up);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    mark_backward_done(ctx, "fused_swiglu");
    at::Tensor gate_up = ctx->get_saved_variables()[0];
    SPPLAN_FUSED_CALL(gate_up, swiglu_backward_in_place, gate_up, grad[0]);
    return {gate_up};
  }
};

// Hugging Face's LlamaRMSNorm, op for op: an fp32 copy of the input, its normalised value cast back,
// times the weight. Autograd keeps the fp32 copy and the cast-back value (what the costmodel's eager
// norm counts); the fp32 normalised value is transient.
at::Tensor hf_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor rstd = at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true).add(eps));
  return weight * (x32 * rstd).to(x.scalar_type());
}

}  // namespace

bool cuda_kernels_built() { return SPPLAN_ENGINE_CUDA_KERNELS != 0; }

const char* fused_kernels_path(const at::Device& device) {
  return cuda_kernels_built() && !kernels_disabled() && device.is_cuda() ? "cuda" : "aten";
}

at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return FusedRmsNorm::apply(x, weight, eps);
}

std::pair<at::Tensor, at::Tensor> fused_add_rms_norm(const at::Tensor& residual, const at::Tensor& x,
                                                     const at::Tensor& weight, double eps) {
  const variable_list out = FusedAddRmsNorm::apply(residual, x, weight, eps);
  return {out[0], out[1]};
}

at::Tensor fused_qk_norm_rope(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                              const at::Tensor& sin, double eps) {
  return FusedQkNormRope::apply(x, weight, cos, sin, eps);
}

at::Tensor fused_swiglu(const at::Tensor& gate_up) { return FusedSwiGlu::apply(gate_up); }

at::Tensor rms_normalize(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused) {
  if (fused) return fused_rms_norm(x, weight, eps);
  // fp32 training keeps LibTorch's rms_norm (what validate engine's fp32 rows measured).
  return x.scalar_type() == at::kFloat ? at::rms_norm(x, {x.size(-1)}, weight, eps) : hf_rms_norm(x, weight, eps);
}

void cross_entropy_grad(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss) {
  SPPLAN_FUSED_CALL(logits, cross_entropy_grad_in_place, logits, labels, token_loss);
}

}  // namespace spplan::engine
