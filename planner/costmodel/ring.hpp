// Ring attention (context parallelism, degree cp) beside Ulysses (degree sp): the K/V traffic of
// one layer pass and the memory it adds. GPUs = dp x sp x cp; a sequence is split over sp x cp
// ranks: Ulysses groups are sp consecutive ranks (inside a node), ring groups are cp ranks sp apart
// (across nodes once sp x cp passes a node). After the Ulysses all-to-all a rank holds S/cp tokens
// (its zigzag chunks r and 2cp-1-r of 2 x cp) for nh/sp query heads; ring attention then runs over
// all S keys, one K/V chunk per step (Liu et al., Ring Attention, arXiv 2310.01889; USP,
// arXiv 2405.07719, for the hybrid).
//
// With the zigzag split every ring step of every rank computes the same causal work (2 of the
// 4 quarter blocks of a chunk pair), so the rank's attention is cp equal blocks of 1/cp of the
// sequence's causal FLOPs over the ring (step_costs.cpp prices them); contiguous shards and a
// sliding window give each rank its own (ring_rank_attention_pairs).
#pragma once

#include <cstdint>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/compute.hpp"

namespace spplan::costmodel {

// Bytes of K and V (activation dtype) of one rank's chunk after the Ulysses all-to-all: what one
// ring hop carries in the forward.
double ring_kv_chunk_bytes(const PlanSpec& plan);

// The kernel calls one rank's ring attention makes in a layer pass: one a ring step (cp); one a
// key-value head group for the all-gather variant run per group (TrainingStack::
// allgather_kv_heads_per_call), each over the whole gathered key range; 1 when cp == 1.
int64_t ring_attention_calls(const PlanSpec& plan);

// Query-key pairs of one head and one sequence of `seq` tokens that the slowest rank's queries
// attend to, causal or over a sliding `window` (> 0; compute.hpp causal_pairs): the rank's shard
// (contiguous: rank r the r-th cp-th; zigzag: chunks r and 2 cp - 1 - r of 2 cp), the slowest
// being the one every other waits for at the layer's next collective.
//   zigzag, no window     : S^2 / (2 cp) on every rank
//   contiguous, no window : the last rank, all earlier keys: (2 cp - 1) / cp of that
//   a window w            : about a shard's S / cp queries x w keys on every rank that starts past w
// cp == 1: the whole sequence's, as its kernel computes them (compute.hpp computed_window_pairs).
double ring_rank_attention_pairs(const PlanSpec& plan, double seq, double window);

// The slowest rank's attention for its kernel's cost (compute.hpp AttentionWork): the pairs above;
// the rows a causal mask crosses, a shard's S / cp in its diagonal block (the ring's other blocks
// are non-causal; the all-gather's calls are causal over the gathered keys, once a row in all),
// twice under a window; no biased pairs (a ring takes no bias). cp == 1: the whole sequence's
// (compute.hpp diagonal_rows, biased_pairs).
AttentionWork ring_rank_attention_work(const PlanSpec& plan, double seq, double window);

// The groups the all-gather variant runs a rank's key-value heads in (ModelSpec::kv_heads_per_rank
// after the Ulysses all-to-all; 1 unless the stack gathers per head group; REQUIRES the group size
// divides them: cp_rules.cpp).
int64_t ring_kv_head_groups(const PlanSpec& plan);

// The ring's communication in one layer pass, seconds: `pre_s` before attention and `post_s`
// after it, neither hidden; `hops` transfers of `hop_s` each, hop i overlapping attention block i.
struct RingPassComm {
  double pre_s = 0;
  double hop_s = 0;
  int64_t hops = 0;
  double post_s = 0;
};
// cp == 1: all zero.
RingPassComm ring_forward_comm(const PlanSpec& plan);
RingPassComm ring_backward_comm(const PlanSpec& plan);

// The ring's merges on the compute stream in one layer pass (one rank): memory traffic that runs
// between the attention blocks, never beside them. Forward: each later block's output and
// log-sum-exp folded into the running fp32 output; backward: each block's dQ and dK/dV added to
// fp32 accumulators; both: the fp32 buffers' casts in and out. 0 when cp == 1.
struct RingMergeTraffic {
  double bytes = 0;    // read + written, the pass's whole
  double kernels = 0;  // launches, the pass's whole
};
RingMergeTraffic ring_forward_merge(const PlanSpec& plan);
RingMergeTraffic ring_backward_merge(const PlanSpec& plan);

// Memory alive during one layer's ring attention above what the layer saves (bytes, one rank):
// receive buffers or the gathered K/V, and the output / log-sum-exp merge buffers (forward), or
// the K/V, dK/dV and dQ accumulators (backward). 0 when cp == 1.
double ring_forward_buffer_bytes(const PlanSpec& plan);
double ring_backward_buffer_bytes(const PlanSpec& plan);

// NCCL buffers of the ring group's communicator and its two peer connections; 0 when cp == 1.
double ring_communicator_bytes(const PlanSpec& plan);

}  // namespace spplan::costmodel
