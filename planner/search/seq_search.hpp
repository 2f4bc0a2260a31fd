// The sequence length searched for a corpus (plan --lengths without --seq): each candidate length
// packs the corpus its own way (planner/corpus), so the question is which length trains an epoch
// soonest: a short one cuts the long documents and runs small steps, a long one holds more
// documents a sequence but needs more memory or more GPUs a sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/corpus/corpus.hpp"
#include "planner/search/search.hpp"

namespace spplan::search {

// The lengths tried: the corpus's median, 90th and 99th percentile documents and its longest, each
// rounded up to a multiple of `multiple` tokens, and the powers of two between the smallest of them
// and the longest's; ascending, at most kMaxSeqCandidates (the longest ones kept).
inline constexpr size_t kMaxSeqCandidates = 12;
std::vector<int64_t> candidate_seq_lengths(const corpus::Corpus& corpus, int64_t multiple);

struct SeqChoice {
  int64_t seq_len = 0;
  corpus::PackedCorpus packed;
  SearchResult result;  // the knob search at this length (feasible: best first)
  // Documents no longer than the sequence (trained whole), of the corpus's.
  int64_t documents_whole = 0;
};

// The share of the corpus's documents a chosen length keeps whole (the 99th percentile document's
// length, a candidate): a long-context corpus is trained for its long documents.
inline constexpr double kWholeShare = 0.99;

// Every candidate length searched (`base` with its seq_len and documents set to each; its other
// fields as given), and the index of the one chosen (-1: none fits at any length): of those that
// keep kWholeShare of the documents whole, the one whose first-ranked plan trains the most real
// tokens a second, the soonest epoch; when none of them fits, of all.

struct SeqSearch {
  std::vector<SeqChoice> choices;
  int best = -1;
};
SeqSearch search_seq_lengths(const PlanSpec& base, const corpus::Corpus& corpus, corpus::Packing packing,
                             const KnobConstraints& constraints, int64_t multiple);

}  // namespace spplan::search
