// The step from a corpus to a plan's documents, the one place both front ends take it: `spplan
// plan --lengths` (cli/corpus_flags.cpp apply_corpus) and spplan-gui's Corpus input, so that a
// plan priced in either holds the same pieces and the costmodel returns the same epoch.
#pragma once

#include "planner/config/plan_spec.hpp"
#include "planner/corpus/corpus.hpp"

namespace spplan::corpus {

// Packs `corpus` at plan->seq_len with `packing` and sets plan->documents to its pieces and
// plan->packed_documents (true unless the packing is none: several documents share a sequence).
// Returns the packing whole (its padding and the tokens it cut, which the plan does not keep).
// REQUIRES: plan != nullptr, plan->seq_len >= 1 (pack's).
PackedCorpus pack_into_plan(const Corpus& corpus, Packing packing, PlanSpec* plan);

}  // namespace spplan::corpus
