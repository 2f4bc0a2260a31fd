#include "planner/corpus/tally.hpp"

#include <algorithm>

namespace spplan::corpus {

Status LengthTally::add(int64_t length, int64_t count, const std::string& where) {
  // Checked before the sums are made, by subtraction and division: length x count alone can reach
  // 2^71, past int64_t.
  if (count > kMaxDocuments - documents_) {
    return Status::invalid(where + ": the documents add up to more than " + std::to_string(kMaxDocuments) +
                           " (allowed: at most 2^31 documents in a corpus)");
  }
  if (count > (kMaxCorpusTokens - tokens_) / length) {
    return Status::invalid(where + ": the tokens add up to more than " + std::to_string(kMaxCorpusTokens) +
                           " (allowed: at most 2^50 tokens in a corpus)");
  }
  if (counts_.size() >= static_cast<size_t>(kMaxDistinctLengths) && counts_.count(length) == 0) {
    return Status::invalid(where + ": more than " + std::to_string(kMaxDistinctLengths) +
                           " distinct lengths (allowed: at most 2^24 in a corpus; round the lengths, e.g. to 64 tokens)");
  }
  documents_ += count;
  tokens_ += length * count;
  counts_[length] += count;
  return Status::ok();
}

Corpus LengthTally::take() {
  Corpus corpus;
  corpus.length_counts.assign(counts_.begin(), counts_.end());
  std::sort(corpus.length_counts.begin(), corpus.length_counts.end());
  counts_.clear();
  documents_ = tokens_ = 0;
  return corpus;
}

}  // namespace spplan::corpus
