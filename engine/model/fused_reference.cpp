#include "engine/model/fused_reference.hpp"

#include <algorithm>

#include <ATen/ATen.h>

#include "engine/io/data.hpp"

namespace spplan::engine::reference {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

// Rows per block in SwiGLU's backward: its temporaries (silu(gate), dc * up, ...) are one block
// wide, about 1 MiB each in fp32, instead of token-count wide, which is what keeps the backward's
// extra memory at one i-wide tensor (dc) as with Liger's elementwise kernel.
int64_t swiglu_block_rows(int64_t ffn) { return std::max<int64_t>(1, (int64_t{1} << 18) / ffn); }

// cross_entropy_grad_in_place on fp32 logits: only [c, 1] temporaries besides the logits.
void cross_entropy_grad_fp32(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss) {
  const at::Tensor valid = labels.ne(kIgnoreLabel);
  const at::Tensor target = labels.masked_fill(valid.logical_not(), 0).unsqueeze(1);  // any valid column
  const at::Tensor target_logit = logits.gather(1, target);
  const at::Tensor row_max = logits.amax(1, /*keepdim=*/true);
  logits.sub_(row_max).exp_();
  const at::Tensor sum_exp = logits.sum(1, /*keepdim=*/true);
  const at::Tensor loss = (row_max + sum_exp.log() - target_logit).squeeze(1);
  token_loss.copy_(loss.masked_fill(valid.logical_not(), 0.0));
  logits.div_(sum_exp);                                                                 // softmax
  logits.scatter_add_(1, target, valid.unsqueeze(1).to(logits.scalar_type()).neg());  // - one_hot
  const at::Tensor ignored = valid.logical_not().nonzero().squeeze(1);
  if (ignored.numel() > 0) logits.index_fill_(0, ignored, 0.0);
}

// Blocks of rows a low-precision chunk is upcast in. Liger's cross-entropy kernel reads each row of
// the chunk's bf16 logits into registers as fp32 and stores the gradient back into the same bf16
// tile (LIGER, ops/cross_entropy.py liger_cross_entropy_kernel: `.cast(tl.float32)` on load, the
// input dtype on store), so the [chunk, V] bf16 tile is the only vocabulary-wide buffer. ATen has
// no registers: an eighth of the chunk's rows at a time is copied to fp32, turned into its
// gradient and written back, so the fp32 copy holds a quarter of the tile's bytes (4 B / 8 against
// 2 B), a small extra on what the costmodel counts for Liger, at 8 passes per chunk.
constexpr int64_t kUpcastBlocksPerChunk = 8;

}  // namespace

// The statistics and the normalisation run in fp32 and the normalised value is cast back to the
// input's dtype before the weight multiplies it: Liger's "llama" casting mode (LIGER
// ops/rms_norm.py, its default for Llama and Qwen), which is Hugging Face's LlamaRMSNorm
// arithmetic. rstd is kept in fp32, as Liger keeps it. In fp32 training every cast is a no-op.
// The residual add is ATen's (fp32 arithmetic, one rounding), as the unfused `x + attn`.
NormForward add_rms_norm_forward(const at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight, double eps) {
  NormForward out;
  if (residual.defined()) out.sum = residual + x;
  const at::Tensor& in = residual.defined() ? out.sum : x;
  const int64_t h = in.size(-1);
  const at::Tensor rows = in.reshape({-1, h});
  at::Tensor y = at::empty_like(rows, at::MemoryFormat::Contiguous);
  out.rstd = at::empty({rows.size(0), 1}, rows.options().dtype(at::kFloat));
  for_each_row_block(rows.size(0), h, [&](int64_t r, int64_t len) {
    const at::Tensor x32 = rows.narrow(0, r, len).to(at::kFloat);
    at::Tensor block_rstd = out.rstd.narrow(0, r, len);
    at::rsqrt_out(block_rstd, x32.square().mean(-1, /*keepdim=*/true).add_(eps));
    y.narrow(0, r, len).copy_(x32 * block_rstd);  // rounded to x's dtype here, as HF's .to(dtype)
  });
  out.y = y.mul_(weight).view(in.sizes());
  return out;
}

// With n = x * rstd (the normalised input) and dn = dy * weight, in fp32, block by block:
//   d weight = sum over tokens of dy * n
//   d x      = rstd * (dn - n * mean(dn * n)) + dsum  (the mean over the hidden dim: rstd depends on x)
NormBackward add_rms_norm_backward(const at::Tensor& dy_in, const at::Tensor& dsum, const at::Tensor& sum,
                                   const at::Tensor& weight, const at::Tensor& rstd) {
  const int64_t h = sum.size(-1);
  const at::Tensor rows = sum.reshape({-1, h}), dy = dy_in.reshape({-1, h});
  const at::Tensor extra = dsum.defined() ? dsum.reshape({-1, h}) : at::Tensor();
  const at::Tensor weight32 = weight.to(at::kFloat);
  at::Tensor dx = at::empty_like(rows, at::MemoryFormat::Contiguous);
  at::Tensor d_weight = at::zeros({h}, weight32.options());
  for_each_row_block(rows.size(0), h, [&](int64_t r, int64_t len) {
    const at::Tensor block_rstd = rstd.narrow(0, r, len), dy32 = dy.narrow(0, r, len).to(at::kFloat);
    at::Tensor n = rows.narrow(0, r, len).to(at::kFloat) * block_rstd;
    d_weight.add_((dy32 * n).sum(0));
    at::Tensor dn = dy32 * weight32;
    const at::Tensor dot = (dn * n).mean(-1, /*keepdim=*/true);
    at::Tensor block_dx = dn.sub_(n.mul_(dot)).mul_(block_rstd);
    if (extra.defined()) block_dx.add_(extra.narrow(0, r, len));
    dx.narrow(0, r, len).copy_(block_dx);
  });
  return {dx.view(sum.sizes()), d_weight.to(weight.scalar_type())};
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(3) / 2;
  const at::Tensor x1 = x.narrow(3, 0, half), x2 = x.narrow(3, half, half);
  return at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, 3);
}

namespace {
// cos, sin [n, d/2] -> [1, n, 1, d/2], broadcast over the batch and the heads.
at::Tensor per_position(const at::Tensor& table) { return table.view({1, table.size(0), 1, table.size(1)}); }
}  // namespace

QkNormRopeForward qk_norm_rope_forward(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                                       const at::Tensor& sin, double eps) {
  const int64_t d = x.size(3);
  NormForward norm = add_rms_norm_forward({}, x.reshape({-1, d}), weight, eps);
  return {apply_rope(norm.y.view(x.sizes()), per_position(cos), per_position(sin)), norm.rstd};
}

// y1 = n1 c - n2 s, y2 = n2 c + n1 s (rotate-half) => dn1 = dy1 c + dy2 s, dn2 = dy2 c - dy1 s.
NormBackward qk_norm_rope_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                   const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& rstd) {
  const int64_t d = x.size(3), half = d / 2;
  const at::Tensor c = per_position(cos).to(at::kFloat), s = per_position(sin).to(at::kFloat);
  const at::Tensor dy32 = dy.to(at::kFloat);
  const at::Tensor dy1 = dy32.narrow(3, 0, half), dy2 = dy32.narrow(3, half, half);
  const at::Tensor dnorm = at::cat({dy1 * c + dy2 * s, dy2 * c - dy1 * s}, 3);
  NormBackward back = add_rms_norm_backward(dnorm.reshape({-1, d}), {}, x.reshape({-1, d}), weight, rstd);
  back.dx = back.dx.view(x.sizes());
  return back;
}

at::Tensor swiglu_forward(const at::Tensor& gate_up) {
  const int64_t ffn = gate_up.size(-1) / 2;
  at::Tensor out = at::silu(gate_up.narrow(-1, 0, ffn));  // the one new i-wide tensor: down_proj's input
  return out.mul_(gate_up.narrow(-1, ffn, ffn));
}

// c = silu(g) * u  =>  dg = silu'(g) * u * dc,  du = silu(g) * dc. Both are written over the
// saved [g | u] block by block; dg is computed first because it reads u.
void swiglu_backward_in_place(at::Tensor& gate_up, const at::Tensor& dc_in) {
  const int64_t ffn = gate_up.size(-1) / 2;
  const at::Tensor rows = gate_up.view({-1, 2 * ffn});
  const at::Tensor dc = dc_in.reshape({-1, ffn});
  const int64_t n = rows.size(0), block = swiglu_block_rows(ffn);
  for (int64_t r = 0; r < n; r += block) {
    const int64_t len = std::min(block, n - r);
    at::Tensor g = rows.narrow(0, r, len).narrow(1, 0, ffn), u = rows.narrow(0, r, len).narrow(1, ffn, ffn);
    const at::Tensor dcb = dc.narrow(0, r, len);
    const at::Tensor dg = at::silu_backward(dcb * u, g);
    u.copy_(at::silu(g).mul_(dcb));
    g.copy_(dg);
  }
}

// fp32 logits are used as they are; lower-precision ones are upcast block by block and the
// gradient is rounded back into them, as Liger does.
void cross_entropy_grad_in_place(at::Tensor& logits, const at::Tensor& labels, const at::Tensor& token_loss) {
  if (logits.scalar_type() == at::kFloat) return cross_entropy_grad_fp32(logits, labels, token_loss);
  const int64_t rows = logits.size(0), block = ceil_div(rows, kUpcastBlocksPerChunk);
  for (int64_t r = 0; r < rows; r += block) {
    const int64_t len = std::min(block, rows - r);
    at::Tensor tile = logits.narrow(0, r, len);
    at::Tensor upcast = tile.to(at::kFloat);
    cross_entropy_grad_fp32(upcast, labels.narrow(0, r, len), token_loss.narrow(0, r, len));
    tile.copy_(upcast);
  }
}

}  // namespace spplan::engine::reference
