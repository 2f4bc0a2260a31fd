// engine/model/window_attention.hpp against the window written out: the dense scores under the
// mask transformers builds (sliding_window_overlay: key c visible to query i when i - w < c <= i),
// softmax, output; forward and gradients, with grouped-query heads and a last block shorter than
// the window.
#include "engine/model/window_attention.hpp"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/model/attention.hpp"

namespace spplan::engine {
namespace {

// [b, s, h, d] x [b, s, h_kv, d]: the s x s scores, masked outside each query's last w keys.
at::Tensor dense_window_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t w) {
  const int64_t s = q.size(1), h = q.size(2);
  const at::Tensor kh = expand_kv_heads(k, h).transpose(1, 2), vh = expand_kv_heads(v, h).transpose(1, 2);
  const at::Tensor scores = at::matmul(q.transpose(1, 2), kh.transpose(2, 3)) / std::sqrt(static_cast<double>(q.size(3)));
  const at::Tensor i = at::arange(s).unsqueeze(1), c = at::arange(s).unsqueeze(0);
  const at::Tensor visible = (c <= i).logical_and(c > i - w);
  return at::matmul(scores.masked_fill(visible.logical_not(), -INFINITY).softmax(-1), vh).transpose(1, 2);
}

TEST(WindowAttention, EqualsTheDenseWindowOutputAndGradients) {
  at::manual_seed(5);
  const int64_t b = 2, s = 100, h = 4, hkv = 2, d = 16, w = 24;  // 5 blocks, the last 4 rows
  const at::Tensor q = at::randn({b, s, h, d}).requires_grad_(true);
  const at::Tensor k = at::randn({b, s, hkv, d}).requires_grad_(true);
  const at::Tensor v = at::randn({b, s, hkv, d}).requires_grad_(true);
  const at::Tensor weights = at::randn({b, s, h, d});  // a loss that weighs every output differently
  const at::Tensor got = window_causal_attention(q, k, v, w), want = dense_window_attention(q, k, v, w);
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5)) << (got - want).abs().max().item<double>();
  const auto g_got = torch::autograd::grad({(got * weights).sum()}, {q, k, v});
  const auto g_want = torch::autograd::grad({(want * weights).sum()}, {q, k, v});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(at::allclose(g_got[i], g_want[i], 1e-4, 1e-5)) << "input " << i << ": "
                                                                << (g_got[i] - g_want[i]).abs().max().item<double>();
  }
  // The window matters: causal attention over the whole sequence gives another output.
  EXPECT_FALSE(at::allclose(causal_attention(q, k, v), want, 1e-3, 1e-3));
}

TEST(WindowAttention, BandMaskSeesEachRowsLastWindowOfKeys) {
  const at::Tensor band = window_band_mask(3, at::TensorOptions());
  ASSERT_EQ(band.sizes(), (at::IntArrayRef{3, 5}));
  // Block keys start w - 1 = 2 before the block: row a sees keys a .. a + 2.
  const at::Tensor want = at::tensor({1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}).view({3, 5}).to(at::kBool);
  EXPECT_TRUE(at::equal(band, want));
}

// A sequence inside the window is causal attention, what windowed_causal_attention then runs.
TEST(WindowAttention, ASequenceInsideTheWindowIsCausal) {
  at::manual_seed(6);
  const at::Tensor q = at::randn({1, 32, 2, 8}), k = at::randn({1, 32, 2, 8}), v = at::randn({1, 32, 2, 8});
  EXPECT_TRUE(at::equal(windowed_causal_attention(q, k, v, 32), causal_attention(q, k, v)));
  EXPECT_TRUE(at::allclose(windowed_causal_attention(q, k, v, 31), dense_window_attention(q, k, v, 31), 1e-5, 1e-5));
}

}  // namespace
}  // namespace spplan::engine
