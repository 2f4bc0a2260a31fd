// The log-sum-exp merge of ring attention (engine/parallel/ring_attention.hpp): attention over two
// halves of the keys, merged, equals attention over all of them, causal or not. And the pieces a
// block of packed documents runs as (ring_pieces): every (query, key) pair the document-causal mask
// allows, each once, and nothing else.
#include "engine/parallel/ring_attention.hpp"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <set>
#include <utility>
#include <vector>

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

// Worked by hand: 16 tokens, cp 2 (chunks of 4), documents [0, 6) and [6, 16). CP rank 0 holds
// positions 0-3 (rows 0-3) and 12-15 (rows 4-7); CP rank 1 holds 4-7 and 8-11.
TEST(RingPieces, AWorkedExample) {
  const std::vector<int64_t> docs{0, 6};
  // Its own K/V: rows 0-3 causal over keys 0-3 (document 0); rows 4-7 (document 1) see none of
  // document 0's keys 0-3 and are causal over their own.
  EXPECT_EQ(ring_pieces(docs, 16, 2, 0, 0), (std::vector<RingPiece>{{0, 4, 0, 4, true}, {4, 4, 4, 4, true}}));
  // Rank 1's K/V: positions 4-7 follow rows 0-3 (nothing); rows 4-7 see document 1's part of
  // them, positions 6-7 (keys 2-3), then all of 8-11 (keys 4-7).
  EXPECT_EQ(ring_pieces(docs, 16, 2, 0, 1), (std::vector<RingPiece>{{4, 4, 2, 2, false}, {4, 4, 4, 4, false}}));
  // Rank 1, its own: 4-5 (document 0) causal, 6-7 causal, and 8-11 over 6-7 and causal over itself.
  EXPECT_EQ(ring_pieces(docs, 16, 2, 1, 1),
            (std::vector<RingPiece>{{0, 2, 0, 2, true}, {2, 2, 2, 2, true}, {4, 4, 2, 2, false}, {4, 4, 4, 4, true}}));
  // Rank 0's K/V at rank 1: 0-3 precede both its chunks but are document 0, which only 4-5 share.
  EXPECT_EQ(ring_pieces(docs, 16, 2, 1, 0), (std::vector<RingPiece>{{0, 2, 0, 4, false}}));
}

// The global positions of CP rank r's n rows (its chunks r and 2cp-1-r).
std::vector<int64_t> rank_positions(int64_t seq_len, int64_t cp, int64_t r) {
  const int64_t chunk = seq_len / (2 * cp);
  std::vector<int64_t> out;
  for (const int64_t c : {r, 2 * cp - 1 - r}) {
    for (int64_t i = 0; i < chunk; ++i) out.push_back(c * chunk + i);
  }
  return out;
}

int64_t doc_of(const std::vector<int64_t>& starts, int64_t t) {
  int64_t d = 0;
  while (d + 1 < static_cast<int64_t>(starts.size()) && starts[static_cast<size_t>(d + 1)] <= t) ++d;
  return d;
}

TEST(RingPieces, EveryVisiblePairOnceAndNoOther) {
  struct Layout {
    int64_t seq_len, cp;
    std::vector<int64_t> starts;
  };
  const std::vector<Layout> layouts = {
      {16, 2, {0}},                       // one document: the zigzag's own blocks
      {16, 2, {0, 4, 8, 12}},             // ends on every chunk edge
      {24, 3, {0, 1, 2, 3, 11, 23}},      // one-token documents, an end beside an edge
      {32, 4, {0, 3, 29}},                // a document from rank 0's first chunk into its second
      {48, 4, {0, 5, 9, 10, 20, 33, 40, 47}},
  };
  for (const Layout& l : layouts) {
    for (int64_t rank = 0; rank < l.cp; ++rank) {
      const std::vector<int64_t> rows = rank_positions(l.seq_len, l.cp, rank);
      std::set<std::pair<int64_t, int64_t>> seen;  // (query, key) global positions
      for (int64_t src = 0; src < l.cp; ++src) {
        const std::vector<int64_t> keys = rank_positions(l.seq_len, l.cp, src);
        for (const RingPiece& p : ring_pieces(l.starts, l.seq_len, l.cp, rank, src)) {
          for (int64_t i = p.row0; i < p.row0 + p.rows; ++i) {
            for (int64_t j = p.key0; j < p.key0 + p.keys; ++j) {
              if (p.causal && j - p.key0 > i - p.row0) continue;  // above the diagonal
              const auto pair = std::pair{rows[static_cast<size_t>(i)], keys[static_cast<size_t>(j)]};
              EXPECT_TRUE(seen.insert(pair).second) << "pair twice: " << pair.first << ", " << pair.second;
            }
          }
        }
      }
      std::set<std::pair<int64_t, int64_t>> want;
      for (const int64_t qpos : rows) {
        for (int64_t kpos = 0; kpos <= qpos; ++kpos) {
          if (doc_of(l.starts, kpos) == doc_of(l.starts, qpos)) want.insert({qpos, kpos});
        }
      }
      EXPECT_EQ(seen, want) << "seq " << l.seq_len << " cp " << l.cp << " rank " << rank;
    }
  }
}

}  // namespace
}  // namespace spplan::engine
