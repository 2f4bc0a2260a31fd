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
// Packed documents (the engine's --eos-id): the zigzag cuts the whole packed row, not each document,
// so one data layout serves both; a block then runs as pieces, each a run of one document's rows
// against a run of the same document's keys (ring_pieces): causal where rows and keys are the same
// tokens, every row over every key where the keys precede. That is the block-diagonal causal mask
// FlashAttention's varlen kernels express with cu_seqlens, cut at the zigzag chunks' edges.
// ring-flash-attention zigzags each document instead (zhuzilin/ring-flash-attention,
// ring_flash_attn/zigzag_ring_flash_attn_varlen.py at 10d992c: halves of every cu_seqlens range),
// as Megatron's THD format under context parallelism does; that needs every document's length
// divisible by 2 cp and a data layout of its own. Rows whose document has no key in a block get
// no piece there: the merge is the same as before, with fewer keys.
//
// Memory (what the costmodel's ring terms price, planner/costmodel/ring.cpp): forward 2 K/V
// buffers (the one computed on and the one arriving), the fp32 running output and log-sum-exp, a
// block's output and log-sum-exp; backward 2 K/V buffers, 2 fp32 dK/dV accumulators, the fp32 dq.
// Tagged as the costmodel counts them: the forward's kBuffers, the backward's kActivations (the
// layer's backward moment). Saved for the backward: q, k, v (the caller's tensors), the output
// and the fp32 log-sum-exp, as the single-process kernel saves.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

// Per batch row, where each document of the whole (unsplit) sequence starts, 0 first (the same type
// as model/attention.hpp's DocStarts). Empty: every row is one causal sequence.
using RingDocStarts = std::vector<std::vector<int64_t>>;

// q [b, n, h, d], k and v [b, n, h_kv, d] (h % h_kv == 0): this CP rank's 2 zigzag chunks ->
// [b, n, h, d], attention inside each document when `docs` has a row per batch row (positions
// within the whole sequence of n cp tokens). REQUIRES: comm.cp() > 1, n even, every CP rank calls
// it with the same shapes and documents.
at::Tensor ring_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 const RingDocStarts& docs = {});

// One kernel call of a ring block: rows [row0, row0 + rows) of this CP rank's n rows against keys
// [key0, key0 + keys) of the K/V it holds, causal when rows and keys are the same tokens.
struct RingPiece {
  int64_t row0, rows, key0, keys;
  bool causal;
  bool operator==(const RingPiece&) const = default;
};

// The pieces of the block where CP rank `cp_rank` holds the K/V of CP rank `src`, for one row whose
// documents start at `doc_starts` (sorted, 0 first) in a sequence of `seq_len` = 2 cp chunks: per
// pair of zigzag chunks (the rows' and the keys'), one piece per document both meet, and none where
// the keys' chunk follows the rows'. Every visible (query, key) pair is in exactly one piece.
// REQUIRES: seq_len % (2 cp) == 0, 0 <= cp_rank, src < cp.
std::vector<RingPiece> ring_pieces(const std::vector<int64_t>& doc_starts, int64_t seq_len, int64_t cp,
                                   int64_t cp_rank, int64_t src);

// The merge of one block into the running output, in place on `out` [b, h, rows, d] and `lse`
// [b, h, rows] (both fp32): lse' = logaddexp(lse, lse_b), out' = out e^(lse - lse') + out_b e^(lse_b - lse').
void merge_attention_block(at::Tensor& out, at::Tensor& lse, const at::Tensor& out_b, const at::Tensor& lse_b);

}  // namespace spplan::engine
