// Attention over documents packed into a sequence (PlanSpec::documents): each document attends only
// within itself, so a sequence's causal work is the sum of its documents' (the square of each
// length, halved), not the square of the sequence. What the stack's kernel computes there, and in
// how many calls, is the record's fact (TrainingStack::packed_attention, ring_packed_attention):
// FlashAttention's varlen entry runs every document in one call; the engine calls its kernel once a
// document. Priced on the mean sequence of the epoch: a step's attention is linear in the pairs, so
// the epoch's attention time is the same whichever sequence holds which document.
#pragma once

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/compute.hpp"

namespace spplan::costmodel {

// How the plan's stack runs packed documents on its layout: ring_packed_attention when cp > 1,
// else packed_attention; kUnread when the plan has no documents.
PackedAttention packed_attention_mode(const PlanSpec& plan);
// The plan's attention is priced per document: it has documents and its stack's mode was read.
bool prices_documents(const PlanSpec& plan);

// One head's attention work of one sequence on the slowest rank (compute.hpp AttentionWork), over a
// `window` (0: none), as the layout computes it: per document where prices_documents (a ring's
// share 1/cp of every document: ms-swift's ring zigzags each document over the ranks, the engine's
// zigzag of the whole sequence gives each rank a share in the mean); else the whole sequence's
// (ring.hpp ring_rank_attention_work).
AttentionWork slowest_rank_attention_work(const PlanSpec& plan, double seq, double window);

// Kernel calls one rank makes for one layer pass of one sequence with per-document calls, each
// paying the kernel's fixed cost: without a ring one a document (a window run in masked blocks,
// each document's blocks); on a ring one a (document, query chunk, key chunk) that the document
// meets in both chunks, the key chunk not later: a document touching t of the 2 cp zigzag chunks,
// t (t + 1) / 2, t = 1 + its length over a chunk's (the boundaries it crosses, at a random place),
// at most 2 cp; the ranks share them. 0 when the stack's mode is not kPerDocument.
double per_document_calls(const PlanSpec& plan, double seq, double window);

// Causal query-key pairs of one head over one sequence's documents (their sum), over a `window`:
// the model's work, what MFU counts; the whole sequence's without documents.
double sequence_causal_pairs(const PlanSpec& plan, double seq, double window);

}  // namespace spplan::costmodel
