// The documents a plan's sequences hold, as a packing cut them (planner/corpus/packing.hpp): what
// the costmodel prices attention over when the sequences are not one document each. Speed follows
// the documents (each attends only within itself); memory follows the sequence length, which the
// costmodel prices as before.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace spplan {

struct DocumentPieces {
  // (piece length in tokens, how many such pieces), ascending by length: every document or part of
  // one that a sequence of the epoch holds. A document longer than the sequence, cut, is two or
  // more pieces; padding is no piece.
  std::vector<std::pair<int64_t, int64_t>> length_counts;
  // The sequences of one epoch these pieces fill (each of the plan's seq_len tokens, padding
  // included).
  int64_t sequences = 0;

  bool empty() const { return sequences == 0; }
  // Tokens of the pieces, padding left out.
  double real_tokens() const {
    double n = 0;
    for (const auto& [length, count] : length_counts) n += static_cast<double>(length) * static_cast<double>(count);
    return n;
  }
  // sum over the pieces of of(length) x count, divided by the sequences: `of` per sequence, on average.
  template <class F>
  double per_sequence(F of) const {
    if (sequences == 0) return 0;
    double sum = 0;
    for (const auto& [length, count] : length_counts) sum += of(static_cast<double>(length)) * static_cast<double>(count);
    return sum / static_cast<double>(sequences);
  }
};

}  // namespace spplan
