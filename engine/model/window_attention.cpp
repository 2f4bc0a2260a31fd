#include "engine/model/window_attention.hpp"

#include <algorithm>
#include <limits>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/attention_blocks.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Block j's rows and keys (window_attention.hpp).
struct WindowBlock {
  int64_t row0, rows, key0, keys;
  bool causal;  // block 0: its own keys, causal, no mask
};

WindowBlock block_at(int64_t j, int64_t s, int64_t w) {
  const int64_t row0 = j * w, rows = std::min(w, s - row0);
  if (j == 0) return {0, rows, 0, rows, true};
  return {row0, rows, row0 - w + 1, rows + w - 1, false};
}

// The block's corner of the shared band bias; none for the causal first block.
at::Tensor bias_of(const WindowBlock& b, const at::Tensor& band) {
  return b.causal ? at::Tensor() : band.narrow(0, 0, b.rows).narrow(1, 0, b.keys);
}

int64_t blocks_of(int64_t s, int64_t w) { return (s + w - 1) / w; }

// The band mask as the kernels take it: added to the scores, 0 where a row sees a key and -inf
// elsewhere, in q's dtype ([w, 2w - 1] elements, made once a call).
at::Tensor band_bias(int64_t window, const at::TensorOptions& options) {
  const at::Tensor band = window_band_mask(window, options);
  return at::zeros(band.sizes(), options).masked_fill_(band.logical_not(), -std::numeric_limits<double>::infinity());
}

struct WindowAttention : torch::autograd::Function<WindowAttention> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            int64_t window) {
    const int64_t s = q.size(1), heads = q.size(2);
    const at::Tensor band = band_bias(window, q.options());
    const bool gqa = kernel_takes_gqa(q, /*biased=*/true);
    const at::Tensor qh = q.transpose(1, 2), kh = k.transpose(1, 2), vh = v.transpose(1, 2);  // [b, h, s, d]
    at::Tensor out = at::empty_like(q);                                                       // [b, s, h, d]
    at::Tensor lse = at::empty({q.size(0), heads, s}, q.options().dtype(at::kFloat));
    const at::Tensor oh = out.transpose(1, 2);
    for (int64_t j = 0; j < blocks_of(s, window); ++j) {
      const WindowBlock b = block_at(j, s, window);
      const BlockOut o = block_forward(qh.narrow(2, b.row0, b.rows), heads_for_kernel(kh.narrow(2, b.key0, b.keys), heads, gqa),
                                       heads_for_kernel(vh.narrow(2, b.key0, b.keys), heads, gqa), b.causal, bias_of(b, band));
      oh.narrow(2, b.row0, b.rows).copy_(o.out);
      lse.narrow(2, b.row0, b.rows).copy_(o.lse);
    }
    ctx->saved_data["window"] = window;
    ctx->save_for_backward({q, k, v, out, lse});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    const int64_t window = ctx->saved_data["window"].toInt(), s = q.size(1), heads = q.size(2), kv_heads = k.size(2);
    const at::Tensor band = band_bias(window, q.options());
    const bool gqa = kernel_takes_gqa(q, /*biased=*/true);
    const at::Tensor g = grad[0].transpose(1, 2), qh = q.transpose(1, 2), kh = k.transpose(1, 2),
                     vh = v.transpose(1, 2), oh = out.transpose(1, 2);
    at::Tensor dq = at::empty_like(q), dk = at::zeros_like(k), dv = at::zeros_like(v);  // [b, s, heads, d]
    for (int64_t j = 0; j < blocks_of(s, window); ++j) {
      const WindowBlock b = block_at(j, s, window);
      const BlockGrads d = block_backward(g.narrow(2, b.row0, b.rows), qh.narrow(2, b.row0, b.rows),
                                          heads_for_kernel(kh.narrow(2, b.key0, b.keys), heads, gqa),
                                          heads_for_kernel(vh.narrow(2, b.key0, b.keys), heads, gqa),
                                          oh.narrow(2, b.row0, b.rows), lse.narrow(2, b.row0, b.rows), b.causal,
                                          bias_of(b, band));
      dq.narrow(1, b.row0, b.rows).copy_(d.dq.transpose(1, 2));
      dk.narrow(1, b.key0, b.keys).add_(kv_grad(d.dk, kv_heads));
      dv.narrow(1, b.key0, b.keys).add_(kv_grad(d.dv, kv_heads));
    }
    return {dq, dk, dv, at::Tensor()};  // no gradient for the window
  }
};

}  // namespace

at::Tensor window_band_mask(int64_t window, const at::TensorOptions& options) {
  const at::TensorOptions index = options.dtype(at::kLong);
  const at::Tensor rows = at::arange(window, index).unsqueeze(1), keys = at::arange(2 * window - 1, index).unsqueeze(0);
  return (keys >= rows).logical_and_(keys <= rows + (window - 1));
}

at::Tensor window_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window) {
  TORCH_CHECK(window > 0 && q.size(1) > window, "window_causal_attention: needs a window shorter than the sequence");
  return WindowAttention::apply(q, k, v, window);
}

}  // namespace spplan::engine
