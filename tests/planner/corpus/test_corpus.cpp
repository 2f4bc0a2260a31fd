// The corpus's own queries (documents, tokens, longest, documents within a length, the nearest-rank
// quantile) and the packings' names.
#include <gtest/gtest.h>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {
namespace {

TEST(Corpus, CountsTokensAndLongest) {
  const Corpus c = corpus_of({5, 3, 3, 2});
  EXPECT_EQ(c.length_counts, (std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {3, 2}, {5, 1}}));
  EXPECT_EQ(c.documents(), 4);
  EXPECT_EQ(c.tokens(), 13);
  EXPECT_EQ(c.longest(), 5);
  EXPECT_EQ(c.documents_within(3), 3);  // 2, 3, 3: a length equal to the sequence fits whole
  EXPECT_EQ(c.documents_within(1), 0);
  EXPECT_EQ(c.documents_within(5), 4);
  const Corpus empty;
  EXPECT_EQ(empty.documents(), 0);
  EXPECT_EQ(empty.longest(), 0);
  EXPECT_EQ(empty.quantile(0.5), 0);
}

// Nearest rank over {2, 3, 3, 5}: rank ceil(q x 4); q = 0.5 -> the 2nd (3), 0.76 -> the 4th (5).
TEST(Corpus, QuantileIsTheNearestRank) {
  const Corpus c = corpus_of({5, 3, 3, 2});
  const struct {
    double q;
    int64_t length;
  } cases[] = {{0, 2}, {0.25, 2}, {0.26, 3}, {0.5, 3}, {0.75, 3}, {0.76, 5}, {1, 5}, {-1, 2}, {2, 5}};
  for (const auto& x : cases) EXPECT_EQ(c.quantile(x.q), x.length) << x.q;
  // 0.07 x 100 is 7.000000000000001 in binary: still the 7th of lengths 1..100, not the 8th.
  std::vector<int64_t> hundred;
  for (int64_t i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(corpus_of(hundred).quantile(0.07), 7);
  EXPECT_EQ(corpus_of(hundred).quantile(0.99), 99);
}

TEST(Corpus, PackingNamesRoundTrip) {
  EXPECT_EQ(packing_names(), (std::vector<std::string>{"wrapped", "bfd", "none"}));
  for (const std::string& name : packing_names()) {
    const auto p = parse_packing("--packing", name);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(to_string(*p), name);
  }
  EXPECT_EQ(parse_packing("--packing", "bfd_split").status().message(),
            "--packing: value \"bfd_split\" is not allowed (allowed: wrapped, bfd, none)");
}

}  // namespace
}  // namespace spplan::corpus
