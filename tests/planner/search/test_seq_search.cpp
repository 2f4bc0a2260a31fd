// The sequence length searched for a corpus (seq_search.hpp): the lengths tried, worked by hand,
// and which is chosen.
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/search/seq_search.hpp"

namespace spplan::search {
namespace {

// 900 documents of 2,000 tokens and 100 of 30,000.
corpus::Corpus long_tail() { return {{{2000, 900}, {30000, 100}}}; }

TEST(SeqSearch, TheLengthsTriedAreTheQuantilesRoundedUpAndThePowersOfTwoBetween) {
  // Median and 90th percentile: the 500th and 900th shortest, 2,000 -> 2048; 99th and the longest:
  // 30,000 -> 30720; the powers of two above 2048 and below 30720: 4096, 8192, 16384.
  EXPECT_EQ(candidate_seq_lengths(long_tail(), 1024), (std::vector<int64_t>{2048, 4096, 8192, 16384, 30720}));
  // A corpus from 1 token to 2^30 tries the kMaxSeqCandidates longest.
  const std::vector<int64_t> wide = candidate_seq_lengths({{{1, 1}, {int64_t{1} << 30, 1}}}, 1024);
  ASSERT_EQ(wide.size(), kMaxSeqCandidates);
  EXPECT_EQ(wide.back(), int64_t{1} << 30);
  EXPECT_EQ(wide.front(), int64_t{1} << 19);
}

TEST(SeqSearch, TheChosenLengthKeepsTheLongDocumentsWholeWhereOneFits) {
  PlanSpec base;
  base.model = load_model("qwen3-4b").value();
  base.cluster.gpu = load_gpu("h100-80gb").value();
  base.cluster.num_gpus = 4;
  base.stack = trainer_stack("usp");
  const SeqSearch s = search_seq_lengths(base, long_tail(), corpus::Packing::kBfd, {}, 1024);
  ASSERT_EQ(s.choices.size(), 5u);
  ASSERT_GE(s.best, 0);
  // Only 30720 holds the 30,000-token documents (10% of them) whole; shorter lengths train faster
  // on their pieces, and are not chosen.
  EXPECT_EQ(s.choices[static_cast<size_t>(s.best)].seq_len, 30720);
  EXPECT_EQ(s.choices[static_cast<size_t>(s.best)].documents_whole, 1000);
  EXPECT_EQ(s.choices[0].documents_whole, 900);
  const auto& chosen = s.choices.back().result.feasible.front().estimate;
  const auto& shortest = s.choices.front().result.feasible.front().estimate;
  EXPECT_GT(shortest.real_tokens_per_s, 0);
  EXPECT_GT(chosen.epoch_s, 0);
  EXPECT_TRUE(chosen.attention_per_document);
}

}  // namespace
}  // namespace spplan::search
