// pack_into_plan: the plan holds pack()'s pieces at its own length, and packed_documents says
// whether documents share a sequence.
#include <gtest/gtest.h>

#include <tuple>

#include "planner/corpus/plan_documents.hpp"

namespace spplan::corpus {
namespace {

// Lengths {5, 3, 3, 2} at seq_len 6, as test_packing's hand-worked case: bfd packs 3 sequences,
// none 4, each with the pieces 2, 3, 3, 5.
TEST(PackIntoPlan, SetsThePiecesAtThePlansLength) {
  const Corpus c = corpus_of({5, 3, 3, 2});
  for (const auto& [packing, sequences, packed] :
       {std::tuple{Packing::kBfd, 3, true}, std::tuple{Packing::kWrapped, 3, true}, std::tuple{Packing::kNone, 4, false}}) {
    PlanSpec plan;
    plan.seq_len = 6;
    const PackedCorpus p = pack_into_plan(c, packing, &plan);
    EXPECT_EQ(plan.documents.length_counts, p.pieces.length_counts) << to_string(packing);
    EXPECT_EQ(plan.documents.sequences, sequences) << to_string(packing);
    EXPECT_EQ(plan.packed_documents, packed) << to_string(packing);
    EXPECT_EQ(p.pieces.length_counts, pack(c, 6, packing).pieces.length_counts) << to_string(packing);
  }
}

}  // namespace
}  // namespace spplan::corpus
