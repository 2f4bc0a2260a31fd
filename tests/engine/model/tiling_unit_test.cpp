// The engine's tiled and fused autograd functions against the plain ATen computation they replace,
// on small random fp32 tensors: values and every gradient within 1e-5 of the tensor's largest
// entry (+ 1e-6). Shapes are chosen so chunks and shards do not divide the token count, and labels
// include kIgnoreLabel. The bf16 cases (TiledLossBf16, FusedKernelsBf16) compare with the
// untiled bf16 computation within a stated number of bf16 roundings.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/io/data.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/model/tiling.hpp"

namespace spplan::engine {
namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;

at::Tensor leaf(at::Tensor t) { return t.detach().requires_grad_(true); }

at::Tensor randn(at::IntArrayRef shape, double scale = 1.0) { return at::randn(shape, at::kFloat) * scale; }

// Gradients of `out` (scalar: 1-d weighting applied by the caller) with respect to `inputs`.
std::vector<at::Tensor> grads_of(const at::Tensor& out, const std::vector<at::Tensor>& inputs) {
  return torch::autograd::grad({out}, inputs);
}

// Relative to the tensor's largest entry: summing a gradient over chunks or shards reorders fp32
// additions, so entries near zero differ by more than 1e-5 of themselves.
void expect_close(const at::Tensor& got, const at::Tensor& want, const char* what, double rtol = kRtol,
                  double atol = kAtol) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const at::Tensor a = got.to(at::kDouble), b = want.to(at::kDouble);
  const double diff = (a - b).abs().max().item<double>(), scale = b.abs().max().item<double>();
  EXPECT_LE(diff, rtol * scale + atol) << what << ": max abs diff " << diff << ", largest entry " << scale;
}

// Labels of T tokens over V classes, every third one ignored.
at::Tensor labels_with_ignored(int64_t tokens, int64_t vocab) {
  at::Tensor labels = at::randint(vocab, {tokens}, at::kLong);
  labels.index_fill_(0, at::arange(0, tokens, 3, at::kLong), kIgnoreLabel);
  return labels;
}

at::Tensor reference_loss(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels) {
  return at::cross_entropy_loss(at::linear(hidden, weight), labels, {}, at::Reduction::Sum, kIgnoreLabel);
}

TEST(TiledLoss, ChunkSizeFollowsLigersRule) {
  // ceil(V / h) = 16 for tiny-llama (h 256, V 4096): 4096 tokens -> 256-token chunks.
  EXPECT_EQ(loss_chunk_tokens(4096, 256, 4096), 256);
  EXPECT_EQ(loss_chunk_tokens(2048, 256, 4096), 128);
  EXPECT_EQ(loss_chunk_tokens(3000, 256, 4096), 256);  // 188 rounded up to a power of two
  EXPECT_EQ(loss_chunk_tokens(5, 256, 4096), 1);
}

TEST(TiledLoss, EqualsUntiledLossAndGradientsWithIgnoredLabels) {
  at::manual_seed(1);
  const int64_t tokens = 37, hidden = 16, vocab = 50;
  const at::Tensor x0 = randn({tokens, hidden}), w0 = randn({vocab, hidden}, 0.3);
  const at::Tensor labels = labels_with_ignored(tokens, vocab);
  for (int64_t chunk : {int64_t{1}, int64_t{8}, int64_t{64}}) {  // 8 does not divide 37; 64 is one chunk
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    const at::Tensor x = leaf(x0), w = leaf(w0), xr = leaf(x0), wr = leaf(w0);
    const at::Tensor loss = fused_linear_cross_entropy(x, w, labels, chunk);
    const at::Tensor ref = reference_loss(xr, wr, labels);
    expect_close(loss, ref, "loss");
    // A non-unit incoming gradient, as the engine's loss_sum / N.
    const auto g = grads_of(loss * 0.37, {x, w});
    const auto gr = grads_of(ref * 0.37, {xr, wr});
    expect_close(g[0], gr[0], "d hidden");
    expect_close(g[1], gr[1], "d weight");
    // Ignored tokens get no gradient.
    EXPECT_EQ(g[0].index_select(0, at::arange(0, tokens, 3, at::kLong)).abs().max().item<float>(), 0.0f);
  }
}

TEST(TiledLoss, TiedEmbeddingGetsBothGradients) {
  // tie_word_embeddings: the head weight is also the embedding table; its gradient is the sum.
  at::manual_seed(2);
  const int64_t tokens = 29, hidden = 8, vocab = 40;
  const at::Tensor w0 = randn({vocab, hidden}, 0.5), ids = at::randint(vocab, {tokens}, at::kLong);
  const at::Tensor labels = labels_with_ignored(tokens, vocab);
  const at::Tensor w = leaf(w0), wr = leaf(w0);
  const at::Tensor loss = fused_linear_cross_entropy(at::tanh(at::embedding(w, ids)), w, labels, 4);
  const at::Tensor ref = reference_loss(at::tanh(at::embedding(wr, ids)), wr, labels);
  expect_close(loss, ref, "loss");
  expect_close(grads_of(loss, {w})[0], grads_of(ref, {wr})[0], "d weight");
}

TEST(TiledLoss, RefusesASecondBackward) {
  const at::Tensor x = leaf(randn({6, 4})), w = leaf(randn({5, 4}));
  const at::Tensor loss = fused_linear_cross_entropy(x, w, at::zeros({6}, at::kLong), 4);
  torch::autograd::grad({loss}, {x}, {}, /*retain_graph=*/true);
  EXPECT_ANY_THROW(torch::autograd::grad({loss}, {x}));
}

// ---- bf16 -------------------------------------------------------------------------------------

// bf16's unit roundoff: 8 significant bits, so one rounding moves a value by at most 2^-8 of it.
// One unit in the last place of the largest entry is up to 2 u of it.
constexpr double kBf16Roundoff = 1.0 / 256;

at::Tensor bf16(const at::Tensor& t) { return t.to(at::kBFloat16); }

// The untiled bf16 loss as the engine's head_loss computes it (Hugging Face's eager path): bf16
// logits from a bf16 GEMM, upcast to fp32, cross-entropy summed over tokens.
at::Tensor reference_loss_bf16(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels) {
  return at::cross_entropy_loss(at::linear(hidden, weight).to(at::kFloat), labels, {}, at::Reduction::Sum, kIgnoreLabel);
}

// The same logits with the softmax left in bf16 (max, exp, sum and log in bf16; only the token
// losses summed in fp32): what the fused loss computed before it upcast its chunks.
at::Tensor bf16_softmax_loss(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels) {
  const at::Tensor logits = at::linear(hidden, weight);  // bf16 [T, V]
  const at::Tensor valid = labels.ne(kIgnoreLabel);
  const at::Tensor target = labels.masked_fill(valid.logical_not(), 0).unsqueeze(1);
  const at::Tensor row_max = logits.amax(1, /*keepdim=*/true);
  const at::Tensor lse = row_max + (logits - row_max).exp().sum(1, /*keepdim=*/true).log();
  const at::Tensor token_loss = (lse - logits.gather(1, target)).squeeze(1).to(at::kFloat);
  return token_loss.masked_fill(valid.logical_not(), 0.0).sum();
}

// The tiled bf16 loss equals the untiled bf16 path, with ignored labels and chunks of 8 that do not
// divide 37 tokens (5 chunks, each upcast in blocks of one row) and one chunk of 64. Tolerances, in
// u = 2^-8 of the tensor's largest entry (measured in brackets):
//  - loss: 1e-5 relative [9e-8]. Both sides take the same bf16 logits (each one a bf16 GEMM dot
//    product rounded once) and run the softmax in fp32; only fp32 sums are ordered differently. A
//    softmax in bf16 misses by far more (TiledLossBf16.SoftmaxRunsInFp32).
//  - d hidden: 4 u, two ulps [1.2 u]. The reference rounds (softmax - one_hot) x g to bf16, then
//    the GEMM output; the tiled loss rounds softmax - one_hot, the GEMM output, then the product
//    with g: entries can land one ulp apart.
//  - d weight: 8 u [1.6 u]. As d hidden, plus Liger's bf16 accumulation of grad_weight over the
//    chunks: one more rounding of the running sum per chunk (5 here).
TEST(TiledLossBf16, EqualsUntiledBf16LossAndGradientsWithIgnoredLabels) {
  at::manual_seed(6);
  const int64_t tokens = 37, hidden = 32, vocab = 300;
  const at::Tensor x0 = bf16(randn({tokens, hidden})), w0 = bf16(randn({vocab, hidden}, 0.3));
  const at::Tensor labels = labels_with_ignored(tokens, vocab);
  for (int64_t chunk : {int64_t{8}, int64_t{64}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    const at::Tensor x = leaf(x0), w = leaf(w0), xr = leaf(x0), wr = leaf(w0);
    const at::Tensor loss = fused_linear_cross_entropy(x, w, labels, chunk);
    const at::Tensor ref = reference_loss_bf16(xr, wr, labels);
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
    expect_close(loss, ref, "loss", 1e-5, 0.0);
    const auto g = grads_of(loss * 0.37, {x, w});
    const auto gr = grads_of(ref * 0.37, {xr, wr});
    EXPECT_EQ(g[0].scalar_type(), at::kBFloat16);  // grad_input and grad_weight in the model dtype, as Liger's
    EXPECT_EQ(g[1].scalar_type(), at::kBFloat16);
    expect_close(g[0], gr[0], "d hidden", 4 * kBf16Roundoff, 0.0);
    expect_close(g[1], gr[1], "d weight", 8 * kBf16Roundoff, 0.0);
    EXPECT_EQ(g[0].index_select(0, at::arange(0, tokens, 3, at::kLong)).abs().max().item<float>(), 0.0f);
  }
}

// The chunk's softmax runs in fp32 (Liger's kernel upcasts each row): with one chunk the logits are
// the reference's GEMM output bit for bit, so the fused loss meets the fp32-softmax reference to
// fp32 summation order (measured 1e-7 relative), while a bf16 softmax of the same logits misses it
// by bf16 roundings of each token's log-sum-exp (measured 1.1e-4 relative, 1000 times further).
TEST(TiledLossBf16, SoftmaxRunsInFp32) {
  at::manual_seed(7);
  const int64_t tokens = 37, hidden = 32, vocab = 300;
  const at::Tensor x = bf16(randn({tokens, hidden})), w = bf16(randn({vocab, hidden}, 0.3));
  const at::Tensor labels = labels_with_ignored(tokens, vocab);
  const double fused = fused_linear_cross_entropy(x, w, labels, 64).item<double>();
  const double fp32_softmax = reference_loss_bf16(x, w, labels).item<double>();
  const double bf16_softmax = bf16_softmax_loss(x, w, labels).item<double>();
  std::cout.precision(9);
  std::cout << "fused " << fused << ", fp32 softmax " << fp32_softmax << ", bf16 softmax " << bf16_softmax << std::endl;
  EXPECT_LE(std::abs(fused - fp32_softmax), 1e-5 * std::abs(fp32_softmax));
  EXPECT_LT(100 * std::abs(fused - fp32_softmax), std::abs(bf16_softmax - fp32_softmax));
}

// Liger's RMSNorm in its "llama" casting mode (the fused norm --tiled-loss brings) is Hugging Face's
// arithmetic: the output equals the engine's eager bf16 norm bit for bit; the gradients, which the
// fused norm computes in fp32 and HF's autograd partly in bf16 (dy x weight), within two ulps of
// the largest entry, 4 u [measured 1.5 u for d x, one ulp; 0.4 u for d weight].
TEST(FusedKernelsBf16, RmsNormMatchesHuggingFacesUpcast) {
  at::manual_seed(8);
  const at::Tensor x0 = bf16(randn({2, 700, 64}, 4.0)), w0 = bf16(1 + randn({64}, 0.1)), dy = bf16(randn({2, 700, 64}));
  const at::Tensor x = leaf(x0), w = leaf(w0), xr = leaf(x0), wr = leaf(w0);
  const at::Tensor y = fused_rms_norm(x, w, 1e-5), ref = rms_normalize(xr, wr, 1e-5, /*fused=*/false);
  EXPECT_TRUE(at::equal(y, ref));
  const auto g = torch::autograd::grad({y}, {x, w}, {dy});
  const auto gr = torch::autograd::grad({ref}, {xr, wr}, {dy});
  expect_close(g[0], gr[0], "d x", 4 * kBf16Roundoff, 0.0);
  expect_close(g[1], gr[1], "d weight", 4 * kBf16Roundoff, 0.0);
}

struct MlpCase {
  bool fused_swiglu;
  int64_t shards;
};

TEST(TiledMlp, EqualsUntiledMlpInValueAndGradient) {
  at::manual_seed(3);
  const int64_t b = 2, n = 37, hidden = 16, ffn = 24;
  const at::Tensor x0 = randn({b, n, hidden}), gu0 = randn({2 * ffn, hidden}, 0.2), down0 = randn({hidden, ffn}, 0.2);
  const at::Tensor dy = randn({b, n, hidden});
  const at::Tensor x = leaf(x0), gu = leaf(gu0), down = leaf(down0);
  const at::Tensor gate_up = at::linear(x, gu);
  const at::Tensor ref = at::linear(at::silu(gate_up.narrow(2, 0, ffn)) * gate_up.narrow(2, ffn, ffn), down);
  const auto gr = torch::autograd::grad({ref}, {x, gu, down}, {dy});
  for (const MlpCase c : {MlpCase{false, 5}, MlpCase{true, 5}, MlpCase{true, 1}, MlpCase{false, 37}}) {
    SCOPED_TRACE("fused " + std::to_string(c.fused_swiglu) + " shards " + std::to_string(c.shards));
    const at::Tensor xt = leaf(x0), gut = leaf(gu0), downt = leaf(down0);
    const at::Tensor y = swiglu_mlp(xt, gut, downt, MlpOptions{c.fused_swiglu, c.shards});
    expect_close(y, ref, "output");
    const auto g = torch::autograd::grad({y}, {xt, gut, downt}, {dy});
    expect_close(g[0], gr[0], "d x");
    expect_close(g[1], gr[1], "d w_gate_up");
    expect_close(g[2], gr[2], "d w_down");
  }
}

TEST(TiledMlp, ShardCountIsCeilTokensOverHidden) {
  EXPECT_EQ(mlp_shards(4096, 256), 16);
  EXPECT_EQ(mlp_shards(2049, 256), 9);
  EXPECT_EQ(mlp_shards(100, 256), 1);
}

TEST(FusedKernels, RmsNormMatchesAtRmsNorm) {
  at::manual_seed(4);
  // 2 x 700 rows of 64: two blocks of the norm's 1024-row fp32 blocks, the second one partial.
  const at::Tensor x0 = randn({2, 700, 64}), w0 = 1 + randn({64}, 0.1), dy = randn({2, 700, 64});
  const at::Tensor x = leaf(x0), w = leaf(w0), xr = leaf(x0), wr = leaf(w0);
  const at::Tensor y = fused_rms_norm(x, w, 1e-5), ref = at::rms_norm(xr, {64}, wr, 1e-5);
  expect_close(y, ref, "output");
  const auto g = torch::autograd::grad({y}, {x, w}, {dy});
  const auto gr = torch::autograd::grad({ref}, {xr, wr}, {dy});
  expect_close(g[0], gr[0], "d x");
  expect_close(g[1], gr[1], "d weight");
}

TEST(FusedKernels, SwiGluMatchesSiluTimesUp) {
  at::manual_seed(5);
  const int64_t ffn = 300;  // blocks of 873 rows: 2 x 500 rows is two blocks
  const at::Tensor gu0 = randn({2, 500, 2 * ffn}, 2.0), dc = randn({2, 500, ffn});
  const at::Tensor gu = leaf(gu0), gur = leaf(gu0);
  // fused_swiglu overwrites its saved input with the gradient: feed it a fresh non-leaf tensor.
  const at::Tensor c = fused_swiglu(gu * 1.0);
  const at::Tensor ref = at::silu(gur.narrow(2, 0, ffn)) * gur.narrow(2, ffn, ffn);
  expect_close(c, ref, "output");
  expect_close(torch::autograd::grad({c}, {gu}, {dc})[0], torch::autograd::grad({ref}, {gur}, {dc})[0], "d gate_up");
}

}  // namespace
}  // namespace spplan::engine
