// Ring attention (context parallelism) over the CP group, with the zigzag split, as one autograd
// function (ring-flash-attention's zigzag_ring_flash_attn; Megatron-LM's load-balanced CP; USP,
// arXiv 2405.07719, for the Ulysses x ring hybrid).
//
// CP rank c holds 2 zigzag chunks of the sequence, c and 2cp-1-c (io/data.hpp zigzag_positions),
// concatenated: n = 2 s/(2cp) rows. Forward, step i = 0..cp-1, holding the K/V of CP rank
// src = (c - i) mod cp (K/V travel one hop per step; the next hop is posted before the block's
// compute so they overlap where the backend allows):
//   i == 0:   all local queries against the local K/V, causal;
//   src < c:  all local queries against the FIRST chunk of src's K/V (its second comes after both);
//   src > c:  the SECOND local chunk's queries against all of src's K/V (the first sees none).
// Every step is the same work. The blocks' outputs merge by their log-sum-exp in fp32:
//   lse' = logaddexp(lse, lse_b); out' = out exp(lse - lse') + out_b exp(lse_b - lse').
// Backward: the K/V go around again, each with an fp32 dK/dV accumulator travelling with it (one
// hop behind, so its hop overlaps the next block); a block's backward given the FINAL output and
// log-sum-exp is exactly its share of dq, dk, dv; after the last step one more hop takes each
// accumulator home. dq accumulates locally in fp32.
//
// Grouped-query attention: the K/V travel with their h_kv heads; a block expands them to the
// query heads (as attention.hpp's expand_kv_heads) and sums the expanded dK/dV back.
//
// Memory (what the costmodel's ring terms price, planner/costmodel/ring.cpp): forward 2 K/V
// buffers (the one computed on and the one arriving), the fp32 running output and log-sum-exp, a
// block's output and log-sum-exp; backward 2 K/V buffers, 2 fp32 dK/dV accumulators, the fp32 dq.
// Tagged as the costmodel counts them: the forward's kBuffers, the backward's kActivations (the
// layer's backward moment). Saved for the backward: q, k, v (the caller's tensors), the output
// and the fp32 log-sum-exp, as the single-process kernel saves.
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

// q [b, n, h, d], k and v [b, n, h_kv, d] (h % h_kv == 0): this CP rank's 2 zigzag chunks ->
// [b, n, h, d]. REQUIRES: comm.cp() > 1, n even, every CP rank calls it with the same shapes.
at::Tensor ring_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// The merge of one block into the running output, in place on `out` [b, h, rows, d] and `lse`
// [b, h, rows] (both fp32): lse' = logaddexp(lse, lse_b), out' = out e^(lse - lse') + out_b e^(lse_b - lse').
void merge_attention_block(at::Tensor& out, at::Tensor& lse, const at::Tensor& out_b, const at::Tensor& lse_b);

}  // namespace spplan::engine
