// Document lengths gathered one line, element or document at a time into a Corpus, each addition
// held to the bounds of corpus.hpp (kMaxDocumentTokens, kMaxDocuments, kMaxCorpusTokens): the
// lengths file readers and the token counter share it, so a corpus any of them returns is one
// pack() takes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {

class LengthTally {
 public:
  // Adds `count` documents of `length` tokens. REQUIRES: 1 <= length <= kMaxDocumentTokens and
  // 1 <= count <= kMaxDocuments (the readers check each value first, with its own message). Fails,
  // `where` prefixing the message, when the documents, their tokens or the distinct lengths pass
  // the corpus's bounds.
  Status add(int64_t length, int64_t count, const std::string& where);
  int64_t documents() const { return documents_; }
  // The histogram, ascending; the tally is left empty.
  Corpus take();

 private:
  std::unordered_map<int64_t, int64_t> counts_;
  int64_t documents_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace spplan::corpus
