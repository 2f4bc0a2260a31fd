// The corpus's own queries and the packings' names.
#include "planner/corpus/corpus.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "planner/core/parse.hpp"

namespace spplan::corpus {

int64_t Corpus::documents_within(int64_t seq_len) const {
  int64_t n = 0;
  for (const auto& [length, count] : length_counts) n += length <= seq_len ? count : 0;
  return n;
}

int64_t Corpus::documents() const {
  int64_t n = 0;
  for (const auto& [length, count] : length_counts) n += count;
  return n;
}

double Corpus::tokens() const {
  double n = 0;
  for (const auto& [length, count] : length_counts) n += static_cast<double>(length) * static_cast<double>(count);
  return n;
}

int64_t Corpus::longest() const { return length_counts.empty() ? 0 : length_counts.back().first; }

int64_t Corpus::quantile(double q) const {
  if (length_counts.empty()) return 0;
  if (!(q > 0)) return length_counts.front().first;  // q = 0, and a NaN
  // The nearest rank: the rank-th shortest document, rank = ceil(q x n) (q = 0.5 of 4 documents:
  // the 2nd). A product within 1e-6 of a whole number is that number: 0.07 x 100 is
  // 7.000000000000001 in binary, whose ceil would be the 8th.
  const int64_t n = documents();
  const double product = std::min(q, 1.0) * static_cast<double>(n);
  const int64_t rank = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(product - 1e-6)), 1, n);
  int64_t below = 0;
  for (const auto& [length, count] : length_counts) {
    below += count;
    if (below >= rank) return length;
  }
  return longest();
}

Corpus corpus_of(const std::vector<int64_t>& lengths) {
  std::unordered_map<int64_t, int64_t> counts;
  for (const int64_t length : lengths) ++counts[length];
  Corpus corpus;
  corpus.length_counts.assign(counts.begin(), counts.end());
  std::sort(corpus.length_counts.begin(), corpus.length_counts.end());
  return corpus;
}

const std::vector<std::string>& packing_names() {
  static const std::vector<std::string> kNames{"wrapped", "bfd", "none"};  // Packing's order
  return kNames;
}

std::string to_string(Packing packing) { return packing_names()[static_cast<size_t>(packing)]; }

Result<Packing> parse_packing(std::string_view what, std::string_view text) {
  SPPLAN_ASSIGN_OR_RETURN(const size_t index, parse_choice(what, text, packing_names()));
  return static_cast<Packing>(index);
}

}  // namespace spplan::corpus
