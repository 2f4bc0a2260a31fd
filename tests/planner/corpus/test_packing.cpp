// The packings: hand-worked cases with exact pieces, sequences and padding; best-fit decreasing,
// which pack() works in groups on the histogram, against the same rule applied one piece at a
// time; and the invariants every packing keeps on seeded corpora.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {
namespace {

using Histogram = std::vector<std::pair<int64_t, int64_t>>;

struct Expected {
  Histogram pieces;
  int64_t sequences;
  double padding, cut;
};

void expect_packed(const Corpus& corpus, int64_t seq_len, Packing packing, const Expected& e) {
  const PackedCorpus p = pack(corpus, seq_len, packing);
  EXPECT_EQ(p.pieces.length_counts, e.pieces) << to_string(packing);
  EXPECT_EQ(p.pieces.sequences, e.sequences) << to_string(packing);
  EXPECT_EQ(p.padding_tokens, e.padding) << to_string(packing);
  EXPECT_EQ(p.tokens_cut, e.cut) << to_string(packing);
}

// Lengths {5, 3, 3, 2} (13 tokens) at seq_len 6.
//   none: one a sequence: 4 sequences, 24 - 13 = 11 padding.
//   bfd: 5 opens A (1 free); 3 fits nowhere, opens B (3 free); the second 3 fits B exactly (0 free);
//        2 fits no 1, opens C (4 free): {5} {3 3} {2}, 18 - 13 = 5 padding.
//   wrapped: ceil(13 / 6) = 3 sequences, 5 padding; the seed's order is 5 3 3 2:
//        [5 1|] [2 3 1|] [1]: pieces 5, 3 and 1, 1, 1, 2 (the first 3 cut 1 + 2, the 2 cut 1 + 1).
TEST(Packing, HandWorkedFourDocuments) {
  const Corpus c = corpus_of({5, 3, 3, 2});
  expect_packed(c, 6, Packing::kNone, {{{2, 1}, {3, 2}, {5, 1}}, 4, 11, 0});
  expect_packed(c, 6, Packing::kBfd, {{{2, 1}, {3, 2}, {5, 1}}, 3, 5, 0});
  expect_packed(c, 6, Packing::kWrapped, {{{1, 3}, {2, 1}, {3, 1}, {5, 1}}, 3, 5, 0});
}

// Three 4s at 6: wrapped cuts the middle one whatever the order, [4 2|] [2 4|]; bfd and none
// cannot put two in one sequence (8 > 6).
TEST(Packing, HandWorkedEqualLengths) {
  const Corpus c = corpus_of({4, 4, 4});
  expect_packed(c, 6, Packing::kWrapped, {{{2, 2}, {4, 2}}, 2, 0, 0});
  expect_packed(c, 6, Packing::kBfd, {{{4, 3}}, 3, 6, 0});
  expect_packed(c, 6, Packing::kNone, {{{4, 3}}, 3, 6, 0});
}

// {14, 3} at 6.
//   none: 14 cut to 6 (8 tokens cut), 3 alone: 2 sequences, 12 - 9 = 3 padding.
//   bfd: 14 is two full pieces (a sequence each) and a rest 2; rests longest first: 3 opens a
//        sequence (3 free), 2 fits it: 3 sequences, pieces 2, 3, 6, 6, 18 - 17 = 1 padding.
//   wrapped: 17 tokens, 3 sequences, 1 padding; the seed's order is 14 3: [6|] [6|] [2 3]:
//        pieces 2, 3, 6, 6 (the other order, [3 3|] [6|] [5], would give 3, 3, 5, 6).
TEST(Packing, HandWorkedLongerThanTheSequence) {
  const Corpus c = corpus_of({14, 3});
  expect_packed(c, 6, Packing::kNone, {{{3, 1}, {6, 1}}, 2, 3, 8});
  expect_packed(c, 6, Packing::kBfd, {{{2, 1}, {3, 1}, {6, 2}}, 3, 1, 0});
  expect_packed(c, 6, Packing::kWrapped, {{{2, 1}, {3, 1}, {6, 2}}, 3, 1, 0});
}

// A histogram's counts are placed in groups, never one by one: 10^9 documents of 3 at 8 are two
// a sequence (9 > 8), 5 x 10^8 sequences with 2 free each.
TEST(Packing, HugeCountsArePackedOnTheHistogram) {
  const Corpus c{{{3, 1'000'000'000}}};
  expect_packed(c, 8, Packing::kBfd, {{{3, 1'000'000'000}}, 500'000'000, 1e9, 0});
  expect_packed(c, 8, Packing::kNone, {{{3, 1'000'000'000}}, 1'000'000'000, 5e9, 0});
  // Three 5s (1 free each) then four 2s at 6: no 1 holds a 2, so a new sequence takes three 2s and
  // another the fourth: 5 sequences.
  expect_packed(Corpus{{{2, 4}, {5, 3}}}, 6, Packing::kBfd, {{{2, 4}, {5, 3}}, 5, 7, 0});
}

// Best-fit decreasing one piece at a time, as TRL's _pack_bfd does it: the sequences it opens.
int64_t bfd_one_by_one(const Corpus& corpus, int64_t seq_len) {
  std::vector<int64_t> pieces;
  int64_t sequences = 0;
  for (const auto& [length, count] : corpus.length_counts) {
    for (int64_t i = 0; i < count; ++i) {
      sequences += length / seq_len;
      if (length % seq_len > 0) pieces.push_back(length % seq_len);
    }
  }
  std::sort(pieces.rbegin(), pieces.rend());
  std::multiset<int64_t> free_space;
  for (const int64_t piece : pieces) {
    auto best = free_space.lower_bound(piece);
    int64_t space = seq_len;
    if (best == free_space.end()) {
      ++sequences;
    } else {
      space = *best;
      free_space.erase(best);
    }
    if (space - piece > 0) free_space.insert(space - piece);
  }
  return sequences;
}

// A corpus of `documents` lengths from 1 to `longest`, drawn from a fixed seed (mt19937_64's
// outputs are the same everywhere), short ones likelier, as corpora are.
Corpus seeded_corpus(uint64_t seed, int documents, int64_t longest) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> lengths;
  for (int i = 0; i < documents; ++i) {
    const int64_t scale = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(longest));
    lengths.push_back(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(scale)));
  }
  return corpus_of(lengths);
}

TEST(Packing, GroupedBfdIsBestFitOneByOne) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Corpus c = seeded_corpus(seed, 300 + static_cast<int>(seed) * 20, 50 + static_cast<int64_t>(seed) * 7);
    for (const int64_t seq_len : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{64}, int64_t{100}, int64_t{333}, int64_t{4096}}) {
      EXPECT_EQ(pack(c, seq_len, Packing::kBfd).pieces.sequences, bfd_one_by_one(c, seq_len))
          << "seed " << seed << " seq_len " << seq_len;
    }
  }
}

int64_t piece_count(const DocumentPieces& p) {
  int64_t n = 0;
  for (const auto& [length, count] : p.length_counts) n += count;
  return n;
}

TEST(Packing, InvariantsOnSeededCorpora) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const Corpus c = seeded_corpus(seed, 2000, 3000);
    for (const int64_t seq_len : {int64_t{1}, int64_t{100}, int64_t{1024}, int64_t{4096}, int64_t{1} << 20}) {
      const auto tokens = static_cast<int64_t>(c.tokens());
      const int64_t fewest = (tokens + seq_len - 1) / seq_len;
      int64_t fragments = 0;  // every document cut at seq_len: what bfd has at most
      for (const auto& [length, count] : c.length_counts) fragments += (length + seq_len - 1) / seq_len * count;
      for (const std::string& name : packing_names()) {
        const Packing packing = *parse_packing("--packing", name);
        const PackedCorpus p = pack(c, seq_len, packing);
        SCOPED_TRACE(name + " seed " + std::to_string(seed) + " seq_len " + std::to_string(seq_len));
        int64_t previous = 0;
        for (const auto& [length, count] : p.pieces.length_counts) {
          EXPECT_GT(length, previous);  // ascending, merged
          EXPECT_LE(length, seq_len);
          EXPECT_GE(count, 1);
          previous = length;
        }
        EXPECT_EQ(p.pieces.real_tokens() + p.padding_tokens, static_cast<double>(p.pieces.sequences * seq_len));
        EXPECT_EQ(p.pieces.real_tokens() + p.tokens_cut, c.tokens());
        EXPECT_GE(p.padding_tokens, 0);
        if (packing == Packing::kWrapped) {
          EXPECT_EQ(p.pieces.sequences, fewest);
          // Each sequence's end falls inside at most one document: documents <= pieces < documents + sequences.
          EXPECT_GE(piece_count(p.pieces), c.documents());
          EXPECT_LT(piece_count(p.pieces), c.documents() + p.pieces.sequences);
          const PackedCorpus again = pack(c, seq_len, packing);
          EXPECT_EQ(again.pieces.length_counts, p.pieces.length_counts);  // one order for one corpus
        }
        if (packing == Packing::kBfd) {
          EXPECT_GE(p.pieces.sequences, fewest);
          // No two sequences are both half empty (the later one's first piece would have fit the
          // earlier), so bfd needs at most twice the fewest; and never more than one per fragment.
          EXPECT_LE(p.pieces.sequences, 2 * fewest);
          EXPECT_LE(p.pieces.sequences, fragments);
          EXPECT_EQ(piece_count(p.pieces), fragments);
        }
        if (packing == Packing::kNone) {
          EXPECT_EQ(p.pieces.sequences, c.documents());
        }
      }
    }
  }
}

// The shuffle is the same on every machine: mt19937_64 is fixed by the standard and the draw from
// it is spplan's own, so this pin holds wherever the tests run (a library's std::shuffle would not).
TEST(Packing, WrappedOrderIsPinned) {
  std::vector<int64_t> lengths;
  for (int64_t i = 1; i <= 20; ++i) lengths.push_back(i);
  const PackedCorpus p = pack(corpus_of(lengths), 16, Packing::kWrapped);
  EXPECT_EQ(p.pieces.sequences, 14);  // 210 tokens
  EXPECT_EQ(p.pieces.length_counts, (Histogram{{1, 2}, {2, 4}, {3, 3}, {4, 4}, {5, 4}, {6, 1}, {7, 3}, {8, 2}, {9, 2},
                                               {11, 2}, {12, 1}, {13, 1}, {15, 1}, {16, 2}}));
}

TEST(Packing, EmptyCorpusPacksToNothing) {
  for (const std::string& name : packing_names()) {
    const PackedCorpus p = pack(Corpus{}, 8, *parse_packing("--packing", name));
    EXPECT_TRUE(p.pieces.empty());
    EXPECT_EQ(p.padding_tokens, 0);
  }
}

}  // namespace
}  // namespace spplan::corpus

namespace spplan::corpus {
namespace {

// Past 4,096 distinct piece lengths, those above 1,024 tokens share bins 1/1024 wide at their
// root-mean-square length: the list stays bounded, the sum of squares (the attention) within 0.1%
// and the tokens within 0.05%, and the padding exact.
TEST(Packing, ManyDistinctLengthsAreBinnedKeepingTheirSquares) {
  Histogram lengths;
  for (int64_t n = 1; n <= 60000; n += 3) lengths.emplace_back(n, 1 + n % 5);
  const Corpus corpus{lengths};
  const PackedCorpus p = pack(corpus, 65536, Packing::kNone);  // each document its own piece
  double tokens = 0, squares = 0;
  for (const auto& [n, c] : lengths) {
    tokens += static_cast<double>(n * c);
    squares += static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(c);
  }
  double binned_squares = 0;
  for (const auto& [n, c] : p.pieces.length_counts) binned_squares += static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(c);
  EXPECT_LT(p.pieces.length_counts.size(), 4096u);
  EXPECT_NEAR(binned_squares / squares, 1.0, 1e-3);
  EXPECT_NEAR(p.pieces.real_tokens() / tokens, 1.0, 5e-4);
  EXPECT_EQ(p.padding_tokens, static_cast<double>(p.pieces.sequences) * 65536 - tokens);
  // Below 1,025 tokens every length is its own.
  for (const auto& [n, c] : p.pieces.length_counts) {
    if (n <= 1024) EXPECT_EQ((n - 1) % 3, 0) << n;
  }
}

}  // namespace
}  // namespace spplan::corpus
