#include "engine/device/attention_blocks.hpp"

#include <limits>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>

namespace spplan::engine {
namespace {

// CUDA's memory-efficient kernel pads its log-sum-exp to a multiple of this many rows, and wants
// its additive bias's rows 16-element aligned (as LibTorch's own SDPA pads a mask, pad_bias).
constexpr int64_t kEfficientLseRows = 32;
constexpr int64_t kEfficientBiasAlign = 16;

// The bias as the memory-efficient kernel takes it: [b, h, rows, keys] broadcast from [rows, keys]
// over storage whose rows are aligned (a copy).
at::Tensor efficient_bias(const at::Tensor& bias, const at::Tensor& q) {
  if (!bias.defined()) return {};
  const int64_t rows = bias.size(0), keys = bias.size(1);
  const int64_t padded = (keys + kEfficientBiasAlign - 1) / kEfficientBiasAlign * kEfficientBiasAlign;
  at::Tensor aligned = at::empty({rows, padded}, bias.options());
  aligned.narrow(1, 0, keys).copy_(bias);
  return aligned.narrow(1, 0, keys).expand({q.size(0), q.size(1), rows, keys});
}

std::optional<at::Tensor> optional(const at::Tensor& t) { return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt; }

}  // namespace

bool kernel_takes_gqa(const at::Tensor& q, bool biased) {
  return !(q.is_cuda() && (q.scalar_type() == at::kFloat || biased));
}

BlockOut block_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, const at::Tensor& bias) {
  if (q.is_cuda()) {  // compiled, not run on the build machines (no GPU): a lent GPU's run measures it
    if (q.scalar_type() == at::kFloat || bias.defined()) {  // the flash kernel runs bf16/fp16 and no mask
      auto r = at::_scaled_dot_product_efficient_attention(q, k, v, optional(efficient_bias(bias, q)),
                                                           /*compute_log_sumexp=*/true, 0.0, causal);
      return {std::get<0>(r), std::get<1>(r).narrow(2, 0, q.size(2))};
    }
    auto r = at::_scaled_dot_product_flash_attention(q, k, v, 0.0, causal);
    return {std::get<0>(r), std::get<1>(r)};
  }
  auto [out, lse] = at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, optional(bias));
  return {out, lse};
}

BlockGrads block_backward(const at::Tensor& grad, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& out, const at::Tensor& lse, bool causal, const at::Tensor& bias) {
  if (q.is_cuda()) {  // unmeasured here, as block_forward
    if (q.scalar_type() == at::kFloat || bias.defined()) {
      const int64_t rows = lse.size(2), padded = (rows + kEfficientLseRows - 1) / kEfficientLseRows * kEfficientLseRows;
      const at::Tensor lse_padded = at::constant_pad_nd(lse, {0, padded - rows}, 0).contiguous();
      const at::Tensor cuda_bias = efficient_bias(bias, q);
      auto r = at::_scaled_dot_product_efficient_attention_backward(grad, q, k, v, cuda_bias, out, lse_padded,
                                                                    at::Tensor(), at::Tensor(), 0.0,
                                                                    {true, true, true, false}, causal);
      return {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
    }
    auto r = at::_scaled_dot_product_flash_attention_backward(grad, q, k, v, out, lse, at::Tensor(), at::Tensor(),
                                                              q.size(2), k.size(2), 0.0, causal, at::Tensor(), at::Tensor());
    return {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
  }
  auto [dq, dk, dv] =
      at::_scaled_dot_product_flash_attention_for_cpu_backward(grad, q, k, v, out, lse, 0.0, causal, optional(bias));
  return {dq, dk, dv};
}

at::Tensor kv_grad(const at::Tensor& g, int64_t kv_heads) {
  const at::Tensor summed = g.size(1) == kv_heads ? g : g.unflatten(1, {kv_heads, g.size(1) / kv_heads}).sum(2);
  return summed.transpose(1, 2);
}

at::Tensor heads_for_kernel(const at::Tensor& x, int64_t heads, bool gqa) {
  return gqa || x.size(1) == heads ? x : x.repeat_interleave(heads / x.size(1), 1);
}

}  // namespace spplan::engine
