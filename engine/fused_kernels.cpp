#include "engine/fused_kernels.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Functions that overwrite their saved tensors in backward can run backward once; a second call
// (retain_graph) would read gradients where inputs used to be. Fail loudly instead.
void mark_backward_done(AutogradContext* ctx, const char* who) {
  TORCH_CHECK(!ctx->saved_data.count("done"), who, ": backward ran twice (its saved tensors are overwritten in place)");
  ctx->saved_data["done"] = true;
}

// Rows per block of the RMSNorm's fp32 arithmetic. Liger's kernel holds one row's fp32 values in
// registers; here blocks of at most 2^16 elements (256 KiB in fp32) are the only fp32
// temporaries, so neither pass adds a [tokens, h] fp32 tensor to what the costmodel counts.
int64_t norm_block_rows(int64_t hidden) { return std::max<int64_t>(1, (int64_t{1} << 16) / hidden); }

// Calls fn(first_row, rows) over `rows` rows in blocks of norm_block_rows(hidden).
template <class Fn>
void for_each_row_block(int64_t rows, int64_t hidden, Fn fn) {
  const int64_t block = norm_block_rows(hidden);
  for (int64_t r = 0; r < rows; r += block) fn(r, std::min(block, rows - r));
}

// The statistics and the normalisation run in fp32 and the normalised value is cast back to the
// input's dtype before the weight multiplies it: Liger's "llama" casting mode (LIGER
// ops/rms_norm.py, its default for Llama and Qwen), which is Hugging Face's LlamaRMSNorm
// arithmetic. rstd is kept in fp32, as Liger keeps it. In fp32 training every cast is a no-op.
struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, double eps) {
    const int64_t h = x.size(-1);
    const at::Tensor rows = x.reshape({-1, h});
    at::Tensor y = at::empty_like(rows, at::MemoryFormat::Contiguous);
    at::Tensor rstd = at::empty({rows.size(0), 1}, rows.options().dtype(at::kFloat));
    for_each_row_block(rows.size(0), h, [&](int64_t r, int64_t len) {
      const at::Tensor x32 = rows.narrow(0, r, len).to(at::kFloat);
      at::Tensor block_rstd = rstd.narrow(0, r, len);
      at::rsqrt_out(block_rstd, x32.square().mean(-1, /*keepdim=*/true).add_(eps));
      y.narrow(0, r, len).copy_(x32 * block_rstd);  // rounded to x's dtype here, as HF's .to(dtype)
    });
    ctx->save_for_backward({x, weight, rstd});
    return y.mul_(weight).view(x.sizes());
  }

  // With n = x * rstd (the normalised input) and dn = dy * weight, in fp32, block by block:
  //   d weight = sum over tokens of dy * n
  //   d x      = rstd * (dn - n * mean(dn * n))   (the mean over the hidden dim: rstd depends on x)
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
    const int64_t h = x.size(-1);
    const at::Tensor rows = x.reshape({-1, h}), dy = grad[0].reshape({-1, h});
    const at::Tensor weight32 = weight.to(at::kFloat);
    at::Tensor dx = at::empty_like(rows, at::MemoryFormat::Contiguous);
    at::Tensor d_weight = at::zeros({h}, weight32.options());
    for_each_row_block(rows.size(0), h, [&](int64_t r, int64_t len) {
      const at::Tensor block_rstd = rstd.narrow(0, r, len), dy32 = dy.narrow(0, r, len).to(at::kFloat);
      at::Tensor n = rows.narrow(0, r, len).to(at::kFloat) * block_rstd;
      d_weight.add_((dy32 * n).sum(0));
      at::Tensor dn = dy32 * weight32;
      const at::Tensor dot = (dn * n).mean(-1, /*keepdim=*/true);
      dx.narrow(0, r, len).copy_(dn.sub_(n.mul_(dot)).mul_(block_rstd));
    });
    return {dx.view(x.sizes()), d_weight.to(weight.scalar_type()), at::Tensor()};
  }
};

// Rows per block in SwiGLU's backward: its temporaries (silu(gate), dc * up, ...) are one block
// wide, about 1 MiB each in fp32, instead of token-count wide, which is what keeps the backward's
// extra memory at one i-wide tensor (dc) as with Liger's elementwise kernel.
int64_t swiglu_block_rows(int64_t ffn) { return std::max<int64_t>(1, (int64_t{1} << 18) / ffn); }

struct FusedSwiGlu : torch::autograd::Function<FusedSwiGlu> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate_up) {
    TORCH_CHECK(gate_up.is_contiguous(), "fused_swiglu: gate_up must be contiguous");
    const int64_t ffn = gate_up.size(-1) / 2;
    ctx->save_for_backward({gate_up});
    at::Tensor out = at::silu(gate_up.narrow(-1, 0, ffn));  // the one new i-wide tensor: down_proj's input
    return out.mul_(gate_up.narrow(-1, ffn, ffn));
  }

  // c = silu(g) * u  =>  dg = silu'(g) * u * dc,  du = silu(g) * dc. Both are written over the
  // saved [g | u] block by block; dg is computed first because it reads u.
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    mark_backward_done(ctx, "fused_swiglu");
    at::Tensor gate_up = ctx->get_saved_variables()[0];
    const int64_t ffn = gate_up.size(-1) / 2;
    const at::Tensor rows = gate_up.view({-1, 2 * ffn});
    const at::Tensor dc = grad[0].reshape({-1, ffn});
    const int64_t n = rows.size(0), block = swiglu_block_rows(ffn);
    for (int64_t r = 0; r < n; r += block) {
      const int64_t len = std::min(block, n - r);
      at::Tensor g = rows.narrow(0, r, len).narrow(1, 0, ffn), u = rows.narrow(0, r, len).narrow(1, ffn, ffn);
      const at::Tensor dcb = dc.narrow(0, r, len);
      const at::Tensor dg = at::silu_backward(dcb * u, g);
      u.copy_(at::silu(g).mul_(dcb));
      g.copy_(dg);
    }
    return {gate_up};
  }
};

}  // namespace

at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return FusedRmsNorm::apply(x, weight, eps);
}

at::Tensor fused_swiglu(const at::Tensor& gate_up) { return FusedSwiGlu::apply(gate_up); }

// Hugging Face's LlamaRMSNorm, op for op: an fp32 copy of the input, its normalised value cast back,
// times the weight. Autograd keeps the fp32 copy and the cast-back value (what the costmodel's eager
// norm counts); the fp32 normalised value is transient.
at::Tensor hf_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor rstd = at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true).add(eps));
  return weight * (x32 * rstd).to(x.scalar_type());
}

at::Tensor rms_normalize(const at::Tensor& x, const at::Tensor& weight, double eps, bool fused) {
  if (fused) return fused_rms_norm(x, weight, eps);
  // fp32 training keeps LibTorch's rms_norm (what validate engine's fp32 rows measured).
  return x.scalar_type() == at::kFloat ? at::rms_norm(x, {x.size(-1)}, weight, eps) : hf_rms_norm(x, weight, eps);
}

}  // namespace spplan::engine
