#include "planner/costmodel/packed_attention.hpp"

#include <algorithm>

#include "planner/costmodel/ring.hpp"

namespace spplan::costmodel {

PackedAttention packed_attention_mode(const PlanSpec& p) {
  if (p.documents.empty()) return PackedAttention::kUnread;
  return p.knobs.cp > 1 ? p.stack.ring_packed_attention : p.stack.packed_attention;
}

bool prices_documents(const PlanSpec& p) { return packed_attention_mode(p) != PackedAttention::kUnread; }

AttentionWork slowest_rank_attention_work(const PlanSpec& p, double seq, double window) {
  if (!prices_documents(p)) return ring_rank_attention_work(p, seq, window);
  const TrainingStack& stack = p.stack;
  if (p.knobs.cp == 1) {
    return {p.documents.per_sequence([&](double n) { return computed_window_pairs(stack, n, window); }),
            p.documents.per_sequence([&](double n) { return diagonal_rows(stack, n, window); }),
            p.documents.per_sequence([&](double n) { return biased_pairs(stack, n, window); })};
  }
  // A ring's blocks are causal only on a rank's own chunks (ring.hpp): each document's rows cross
  // their diagonal once a chunk, a 1/cp share of its rows on each rank, twice under a window.
  const double cp = static_cast<double>(p.knobs.cp);
  const double pairs = p.documents.per_sequence([&](double n) { return causal_pairs(n, window); }) / cp;
  const double rows =
      p.documents.per_sequence([&](double n) { return window > 0 && n > window ? 2 * n : n; }) / cp;
  return {pairs, rows, 0.0};
}

double per_document_calls(const PlanSpec& p, double seq, double window) {
  if (packed_attention_mode(p) != PackedAttention::kPerDocument) return 0;
  if (p.knobs.cp == 1) {
    return p.documents.per_sequence(
        [&](double n) { return static_cast<double>(window_attention_calls(p.stack, n, window)); });
  }
  const double chunks = 2.0 * static_cast<double>(p.knobs.cp), chunk = seq / chunks;
  const double calls = p.documents.per_sequence([&](double n) {
    const double touched = std::min(chunks, 1.0 + n / chunk);
    return touched * (touched + 1) / 2;
  });
  return calls / static_cast<double>(p.knobs.cp);
}

double sequence_causal_pairs(const PlanSpec& p, double seq, double window) {
  if (p.documents.empty()) return causal_pairs(seq, window);
  return p.documents.per_sequence([&](double n) { return causal_pairs(n, window); });
}

}  // namespace spplan::costmodel
