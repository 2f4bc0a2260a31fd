#include "planner/corpus/plan_documents.hpp"

namespace spplan::corpus {

PackedCorpus pack_into_plan(const Corpus& corpus, Packing packing, PlanSpec* plan) {
  PackedCorpus packed = pack(corpus, plan->seq_len, packing);
  plan->documents = packed.pieces;
  plan->packed_documents = packing != Packing::kNone;
  return packed;
}

}  // namespace spplan::corpus
