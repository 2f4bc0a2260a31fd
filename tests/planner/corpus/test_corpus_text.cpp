// The corpus's words, which spplan plan --lengths and the GUI's Corpus tab both print: counts in
// the singular for one, the share of long documents, and what each packing does with them.
#include <gtest/gtest.h>

#include "planner/corpus/corpus_text.hpp"

namespace spplan::corpus {
namespace {

TEST(CorpusText, OneDocumentIsSingular) {
  EXPECT_EQ(documents_text(1), "1 document");
  EXPECT_EQ(documents_text(0), "0 documents");
  EXPECT_EQ(documents_text(12345), "12,345 documents");
}

// Lengths {100, 100, 100, 500} at 256 tokens: one document of four (25.0%) is longer.
TEST(CorpusText, LongerDocumentsSayWhatThePackingDoes) {
  const Corpus c = corpus_of({100, 100, 100, 500});
  EXPECT_EQ(longer_text(c, Packing::kBfd, 256, pack(c, 256, Packing::kBfd)),
            "1 document (25.0%) longer than the sequence: cut into pieces, each trained apart");
  // none: the 500-token document keeps its first 256 tokens; 244 are not trained.
  const PackedCorpus none = pack(c, 256, Packing::kNone);
  EXPECT_EQ(none.tokens_cut, 244);
  EXPECT_EQ(longer_text(c, Packing::kNone, 256, none),
            "1 document (25.0%) longer than the sequence: cut at the sequence's end, 244 tokens not trained");
  EXPECT_EQ(longer_text(c, Packing::kBfd, 500, pack(c, 500, Packing::kBfd)), "");
}

// Below 1% the share keeps two significant digits: 1 document of 2,400 is 0.042%.
TEST(CorpusText, ASmallShareStillShows) {
  std::vector<int64_t> lengths(2399, 10);
  lengths.push_back(1000);
  const Corpus c = corpus_of(lengths);
  EXPECT_EQ(longer_text(c, Packing::kWrapped, 512, pack(c, 512, Packing::kWrapped)),
            "1 document (0.042%) longer than the sequence: cut into pieces, each trained apart");
}

// none packs each of the 4 documents into its own sequence of 256: 1,024 slots hold 100 + 100 +
// 100 + 256 = 556 trained tokens (the 500-token document cut to 256), so 468 are padding: 45.7%.
TEST(CorpusText, PackedTextNamesTheSourceWhenGiven) {
  const Corpus c = corpus_of({100, 100, 100, 500});
  const PackedCorpus none = pack(c, 256, Packing::kNone);
  EXPECT_EQ(packed_text(c, Packing::kNone, 256, none, "docs.csv"),
            "4 documents (docs.csv), 800 tokens, longest 500; packed none into 4 sequences of 256 tokens: 45.7% padding");
  EXPECT_EQ(packed_text(c, Packing::kNone, 256, none),
            "4 documents, 800 tokens, longest 500; packed none into 4 sequences of 256 tokens: 45.7% padding");
}

}  // namespace
}  // namespace spplan::corpus
