// The fused layer ops (engine/model/fused_kernels.hpp) on the CPU, where they run their ATen reference
// (engine/model/fused_reference.hpp), against the engine's unfused path they replace: values and every
// gradient. fp32: within 1e-5 of the tensor's largest entry (+1e-6): only the order of fp32 sums
// differs. bf16: in u = 2^-8 (bf16's unit roundoff) of the largest entry, with the reason beside
// each bound. Shapes do not divide the reference's row blocks; q/k are strided views of a stacked
// q/k/v tensor, as in the model.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/io/data.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/model/fused_reference.hpp"

namespace spplan::engine {
namespace {

constexpr double kBf16Roundoff = 1.0 / 256;

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

double max_error(const at::Tensor& got, const at::Tensor& want) {
  return (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const char* what, double rtol, double atol = 0) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double diff = max_error(got, want), scale = want.to(at::kDouble).abs().max().item<double>();
  EXPECT_LE(diff, rtol * scale + atol) << what << ": max abs diff " << diff << ", largest entry " << scale;
}

struct Tolerance {
  at::ScalarType dtype;
  double values, grads;  // relative to the largest entry
};
// bf16 values: the residual add and the norm round where the eager path rounds (bit-identical on
// the CPU, asserted with 0). bf16 grads: the eager backward rounds dy x weight and the norm's
// intermediate products to bf16 (HF's autograd), the reference computes them in fp32 and rounds
// once: two ulps of the largest entry, 4 u.
const Tolerance kFp32{at::kFloat, 1e-5, 1e-5};
const Tolerance kBf16{at::kBFloat16, 0, 4 * kBf16Roundoff};

TEST(FusedAddRmsNorm, MatchesAddThenNorm) {
  for (const Tolerance& t : {kFp32, kBf16}) {
    SCOPED_TRACE(c10::toString(t.dtype));
    at::manual_seed(11);
    // 3 x 500 rows of 96: the reference's blocks are 682 rows, the last one partial.
    const at::Tensor r0 = at::randn({3, 500, 96}).to(t.dtype), x0 = at::randn({3, 500, 96}).mul(0.5).to(t.dtype);
    const at::Tensor w0 = (1 + 0.1 * at::randn({96})).to(t.dtype);
    const at::Tensor d_sum = at::randn({3, 500, 96}).to(t.dtype), d_y = at::randn({3, 500, 96}).to(t.dtype);
    const at::Tensor r = leaf(r0), x = leaf(x0), w = leaf(w0), rr = leaf(r0), xr = leaf(x0), wr = leaf(w0);
    const auto [sum, y] = fused_add_rms_norm(r, x, w, 1e-6);
    const at::Tensor sum_ref = rr + xr, y_ref = rms_normalize(sum_ref, wr, 1e-6, /*fused=*/false);
    expect_close(sum, sum_ref, "sum", 0);
    expect_close(y, y_ref, "y", t.values, t.dtype == at::kFloat ? 1e-6 : 0);
    const auto g = torch::autograd::grad({sum, y}, {r, x, w}, {d_sum, d_y});
    const auto gr = torch::autograd::grad({sum_ref, y_ref}, {rr, xr, wr}, {d_sum, d_y});
    expect_close(g[0], gr[0], "d residual", t.grads, 1e-6);
    expect_close(g[1], gr[1], "d x", t.grads, 1e-6);
    expect_close(g[2], gr[2], "d weight", t.grads, 1e-6);
  }
}

TEST(FusedAddRmsNorm, UnusedSumGetsOnlyTheNormsGradient) {
  at::manual_seed(12);
  const at::Tensor r = leaf(at::randn({7, 32})), x = leaf(at::randn({7, 32})), w = leaf(1 + 0.1 * at::randn({32}));
  const auto [sum, y] = fused_add_rms_norm(r, x, w, 1e-6);
  const at::Tensor dy = at::randn({7, 32});
  const auto g = torch::autograd::grad({y}, {r, x}, {dy});
  const at::Tensor rr = leaf(r), xr = leaf(x);
  const auto gr = torch::autograd::grad({at::rms_norm(rr + xr, {32}, w.detach(), 1e-6)}, {rr, xr}, {dy});
  expect_close(g[0], gr[0], "d residual", 1e-5, 1e-6);
  expect_close(g[1], gr[1], "d x", 1e-5, 1e-6);
}

// q/k as the model cuts them from the stacked GEMM output: [b, n, heads, d] with token stride
// (nh + 2 nkv) d. The unfused path: RMSNorm per head, then rotate-half RoPE with [1, n, 1, d/2] tables.
TEST(FusedQkNormRope, MatchesNormThenRope) {
  for (const Tolerance& t : {kFp32, kBf16}) {
    SCOPED_TRACE(c10::toString(t.dtype));
    at::manual_seed(13);
    const int64_t b = 2, n = 37, heads = 4, d = 16, width = 8 * d;
    const at::Tensor qkv0 = at::randn({b, n, width}).mul(3).to(t.dtype);
    const at::Tensor w0 = (1 + 0.1 * at::randn({d})).to(t.dtype);
    const at::Tensor angles = at::outer(at::arange(5, 5 + n, at::kFloat), at::rand({d / 2}));
    const at::Tensor cos = angles.cos().to(t.dtype), sin = angles.sin().to(t.dtype);
    const at::Tensor dy = at::randn({b, n, heads, d}).to(t.dtype);
    const at::Tensor qkv = leaf(qkv0), w = leaf(w0), qkvr = leaf(qkv0), wr = leaf(w0);
    const at::Tensor q = qkv.narrow(2, heads * d, heads * d).view({b, n, heads, d});  // a "k" slice: offset view
    const at::Tensor qr = qkvr.narrow(2, heads * d, heads * d).view({b, n, heads, d});
    const at::Tensor y = fused_qk_norm_rope(q, w, cos, sin, 1e-6);
    const at::Tensor y_ref = reference::apply_rope(rms_normalize(qr, wr, 1e-6, false), cos.view({1, n, 1, d / 2}),
                                                   sin.view({1, n, 1, d / 2}));
    EXPECT_TRUE(y.is_contiguous());
    expect_close(y, y_ref, "y", t.values, t.dtype == at::kFloat ? 1e-6 : 0);
    const auto g = torch::autograd::grad({y}, {qkv, w}, {dy});
    const auto gr = torch::autograd::grad({y_ref}, {qkvr, wr}, {dy});
    // bf16: the eager RoPE backward rounds dy x cos and dy x sin and their sum to bf16 before the
    // norm's backward: 2 more roundings than the norm alone, 8 u.
    const double grads = t.dtype == at::kFloat ? t.grads : 8 * kBf16Roundoff;
    expect_close(g[0], gr[0], "d qkv", grads, 1e-6);
    expect_close(g[1], gr[1], "d weight", grads, 1e-6);
    EXPECT_EQ(g[0].narrow(2, 0, heads * d).abs().max().item<double>(), 0.0);  // only the slice it read
  }
}

// SwiGLU in bf16 against the eager silu(gate) * up: the forward is the same ops (bit-identical);
// the backward computes silu'(g) u dc as ATen's silu_backward does, after rounding dc x u: 2 u.
TEST(FusedSwiGlu, Bf16MatchesEager) {
  at::manual_seed(14);
  const int64_t ffn = 40;
  const at::Tensor gu0 = at::randn({3, 50, 2 * ffn}).mul(2).to(at::kBFloat16);
  const at::Tensor dc = at::randn({3, 50, ffn}).to(at::kBFloat16);
  const at::Tensor gu = leaf(gu0), gur = leaf(gu0);
  const at::Tensor c = fused_swiglu(gu * 1.0);  // it overwrites its saved input: a fresh non-leaf
  const at::Tensor ref = at::silu(gur.narrow(2, 0, ffn)) * gur.narrow(2, ffn, ffn);
  expect_close(c, ref, "c", 0);
  expect_close(torch::autograd::grad({c}, {gu}, {dc})[0], torch::autograd::grad({ref}, {gur}, {dc})[0], "d gate_up",
               4 * kBf16Roundoff);
}

// The per-chunk cross-entropy: its gradient is softmax - one_hot (zero on ignored rows) and its
// token losses are at::cross_entropy's, in fp32 and in bf16 (softmax in fp32 either way).
TEST(FusedCrossEntropy, GradientIsSoftmaxMinusOneHot) {
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(c10::toString(dtype));
    at::manual_seed(15);
    const int64_t rows = 19, vocab = 70;
    const at::Tensor logits0 = at::randn({rows, vocab}).mul(3).to(dtype);
    at::Tensor labels = at::randint(vocab, {rows}, at::kLong);
    labels.index_fill_(0, at::arange(0, rows, 4, at::kLong), kIgnoreLabel);
    at::Tensor grad = logits0.clone(), token_loss = at::empty({rows}, at::kFloat);
    cross_entropy_grad(grad, labels, token_loss);
    const at::Tensor l32 = leaf(logits0.to(at::kFloat));
    const at::Tensor ref_loss = at::cross_entropy_loss(l32, labels, {}, at::Reduction::None, kIgnoreLabel);
    const at::Tensor ref_grad = torch::autograd::grad({ref_loss.sum()}, {l32})[0];
    expect_close(token_loss, ref_loss, "token losses", 1e-5, 1e-6);
    // bf16: the fp32 gradient rounded once to bf16, one rounding: u of each entry (<= 1).
    expect_close(grad, ref_grad, "gradient", dtype == at::kFloat ? 1e-5 : kBf16Roundoff, 1e-6);
  }
}

TEST(FusedKernels, CpuRunsTheReference) { EXPECT_STREQ(fused_kernels_path(at::Device(at::kCPU)), "aten"); }

}  // namespace
}  // namespace spplan::engine
