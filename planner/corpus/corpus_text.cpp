#include "planner/corpus/corpus_text.hpp"

#include "planner/core/parse.hpp"

namespace spplan::corpus {

std::string documents_text(double count) { return count_text(count) + (count == 1 ? " document" : " documents"); }

std::string packed_text(const Corpus& corpus, Packing packing, int64_t seq_len, const PackedCorpus& packed,
                        const std::string& source) {
  const double slots = static_cast<double>(packed.pieces.sequences) * static_cast<double>(seq_len);
  return documents_text(static_cast<double>(corpus.documents())) + (source.empty() ? "" : " (" + source + ")") + ", " +
         count_text(corpus.tokens()) + " tokens, longest " + count_text(static_cast<double>(corpus.longest())) +
         "; packed " + to_string(packing) + " into " + count_text(static_cast<double>(packed.pieces.sequences)) +
         " sequences of " + std::to_string(seq_len) + " tokens: " +
         format_number("%.1f%% padding", slots > 0 ? 100.0 * packed.padding_tokens / slots : 0.0);
}

std::string longer_text(const Corpus& corpus, Packing packing, int64_t seq_len, const PackedCorpus& packed) {
  const int64_t longer = corpus.documents() - corpus.documents_within(seq_len);
  if (longer == 0) return "";
  const double pct = 100.0 * static_cast<double>(longer) / static_cast<double>(corpus.documents());
  // Two significant digits below 1% (0.042%), one decimal above: a rare long document still shows.
  return documents_text(static_cast<double>(longer)) + " (" + format_number(pct < 1 ? "%.2g%%" : "%.1f%%", pct) +
         ") longer than the sequence: " +
         (packing == Packing::kNone ? "cut at the sequence's end, " + count_text(packed.tokens_cut) + " tokens not trained"
                                    : std::string("cut into pieces, each trained apart"));
}

}  // namespace spplan::corpus
