// The log-sum-exp merge of ring attention (engine/parallel/ring_attention.hpp): attention over two
// halves of the keys, merged, equals attention over all of them, causal or not.
#include "engine/parallel/ring_attention.hpp"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

namespace spplan::engine {
namespace {

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// [b, h, s, d] attention through LibTorch's CPU flash kernel: (out, log-sum-exp).
std::tuple<at::Tensor, at::Tensor> attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
  return at::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal);
}

TEST(RingAttentionMerge, TwoHalvesOfTheKeysMergeToTheWholeAttention) {
  at::manual_seed(3);
  const at::Tensor q = at::randn({2, 3, 24, 8}), k = at::randn({2, 3, 40, 8}), v = at::randn({2, 3, 40, 8});
  const auto [whole, whole_lse] = attend(q, k, v, false);
  auto [out, lse] = attend(q, k.narrow(2, 0, 16), v.narrow(2, 0, 16), false);
  const auto [out_b, lse_b] = attend(q, k.narrow(2, 16, 24), v.narrow(2, 16, 24), false);
  merge_attention_block(out, lse, out_b, lse_b);
  EXPECT_LE(max_diff(out, whole), 1e-6);
  EXPECT_LE(max_diff(lse, whole_lse), 1e-5);
}

TEST(RingAttentionMerge, CausalRowsMergeTheirEarlierKeysAndTheirOwnDiagonalBlock) {
  // The second half of a causal sequence: all of the first half's keys, then causal on its own.
  at::manual_seed(4);
  const at::Tensor q = at::randn({1, 2, 32, 8}), k = at::randn({1, 2, 32, 8}), v = at::randn({1, 2, 32, 8});
  const auto [whole, whole_lse] = attend(q, k, v, true);
  const at::Tensor q2 = q.narrow(2, 16, 16);
  auto [out, lse] = attend(q2, k.narrow(2, 16, 16), v.narrow(2, 16, 16), true);
  const auto [out_b, lse_b] = attend(q2, k.narrow(2, 0, 16), v.narrow(2, 0, 16), false);
  merge_attention_block(out, lse, out_b, lse_b);
  EXPECT_LE(max_diff(out, whole.narrow(2, 16, 16)), 1e-6);
  EXPECT_LE(max_diff(lse, whole_lse.narrow(2, 16, 16)), 1e-5);
}

}  // namespace
}  // namespace spplan::engine
