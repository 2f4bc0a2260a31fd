// The words a corpus packed at one sequence length is told in: spplan plan --lengths (and fit,
// rent, estimate) print them, and the GUI's Corpus tab shows the same, so the two cannot drift.
#pragma once

#include <cstdint>
#include <string>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {

// "1 document", "12,345 documents" (count_text's digits).
std::string documents_text(double count);

// "1,000 documents (SOURCE), 4,800,000 tokens, longest 30,000; packed bfd into 171 sequences of
// 32768 tokens: 14.4% padding"; without a source the parenthesis is left out.
std::string packed_text(const Corpus& corpus, Packing packing, int64_t seq_len, const PackedCorpus& packed,
                        const std::string& source = "");

// What the packing does to the documents longer than seq_len: "100 documents (10.0%) longer than
// the sequence: cut into pieces, each trained apart", or with none "...: cut at the sequence's
// end, 2,800,000 tokens not trained"; "" when no document is longer.
std::string longer_text(const Corpus& corpus, Packing packing, int64_t seq_len, const PackedCorpus& packed);

}  // namespace spplan::corpus
