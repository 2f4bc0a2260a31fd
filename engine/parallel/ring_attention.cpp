#include "engine/parallel/ring_attention.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/attention_blocks.hpp"
#include "engine/device/memory_meter.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ---- which rows meet which keys at a step (the zigzag, ring_attention.hpp) -------------------

RingPiece span_at(int64_t step, int64_t cp_rank, int64_t src, int64_t n) {
  if (step == 0) return {0, n, 0, n, true};           // local K/V: causal over both chunks
  if (src < cp_rank) return {0, n, 0, n / 2, false};  // src's first chunk precedes both of ours
  return {n / 2, n / 2, 0, n, false};                 // our second chunk follows both of src's
}

int64_t src_at(const Comm& comm, int64_t step) { return (comm.cp_rank() - step + comm.cp()) % comm.cp(); }

// A piece and the batch row it runs on (-1: every row, the span of a block without documents).
struct BatchPiece {
  int64_t batch_row;
  RingPiece piece;
};

// The kernel calls of step `step`: the one span, or with documents each row's pieces.
std::vector<BatchPiece> pieces_at(const Comm& comm, const RingDocStarts& docs, int64_t step, int64_t n) {
  const int64_t src = src_at(comm, step);
  if (docs.empty()) return {{-1, span_at(step, comm.cp_rank(), src, n)}};
  std::vector<BatchPiece> out;
  for (size_t r = 0; r < docs.size(); ++r) {
    for (const RingPiece& p : ring_pieces(docs[r], n * comm.cp(), comm.cp(), comm.cp_rank(), src)) {
      out.push_back({static_cast<int64_t>(r), p});
    }
  }
  return out;
}

// The batch row of a piece (all of them for a span): dim 0.
at::Tensor batch_of(const at::Tensor& x, const BatchPiece& p) { return p.batch_row < 0 ? x : x.narrow(0, p.batch_row, 1); }
// Its rows of a [b, h, n, ...] tensor.
at::Tensor rows_of(const at::Tensor& x, const BatchPiece& p) { return batch_of(x, p).narrow(2, p.piece.row0, p.piece.rows); }

// K or V (`which` 0 or 1) of the K/V buffer [2, b, n, h_kv, d], the piece's keys, in the kernel's
// layout; expanded to the query heads (a copy per block) only for a kernel without GQA.
at::Tensor keys_of(const at::Tensor& kv, int64_t which, const BatchPiece& p, int64_t heads, bool gqa) {
  return heads_for_kernel(batch_of(kv[which], p).narrow(1, p.piece.key0, p.piece.keys).transpose(1, 2), heads, gqa);
}

// Hop tags: the K/V and the dK/dV accumulators can be in flight at once.
constexpr int kKvTag = 0, kGradTag = 1;

struct Forward {
  at::Tensor out;  // [b, n, h, d], q's dtype
  at::Tensor lse;  // [b, h, n], fp32
};

Forward ring_forward(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const RingDocStarts& docs) {
  const MemCategory outer = memory_category();
  MemoryScope tag(MemCategory::kBuffers);
  const int64_t cp = comm.cp(), n = q.size(1), heads = q.size(2);
  const at::Tensor qh = q.transpose(1, 2);  // [b, h, n, d]
  const bool gqa = kernel_takes_gqa(q);
  at::Tensor kv = at::stack({k, v});        // what the hops carry: [2, b, n, h_kv, d], contiguous
  at::Tensor out, lse;                      // the running merge, fp32
  if (!docs.empty()) {  // pieces merge into it from the first step on; every row meets its own diagonal there
    MemoryScope running(outer);
    out = at::zeros(qh.sizes(), qh.options().dtype(at::kFloat));
    lse = at::full({qh.size(0), heads, n}, -std::numeric_limits<double>::infinity(), qh.options().dtype(at::kFloat));
  }
  for (int64_t i = 0; i < cp; ++i) {
    at::Tensor next;
    RingHop hop;
    if (i + 1 < cp) {  // the next step's K/V travel while this block computes
      next = at::empty_like(kv);
      hop = comm.ring_post({kv}, {next}, kKvTag);
    }
    for (const BatchPiece& p : pieces_at(comm, docs, i, n)) {
      const bool first = i == 0 && docs.empty();  // the local span covers every row
      BlockOut b;
      {
        // The first block's log-sum-exp (and in fp32 its output) becomes the running one, which the
        // backward keeps: the layer's activations, as the single-process kernel's.
        MemoryScope block_tag(first ? outer : MemCategory::kBuffers);
        b = block_forward(rows_of(qh, p), keys_of(kv, 0, p, heads, gqa), keys_of(kv, 1, p, heads, gqa), p.piece.causal);
      }
      if (first) {
        out = b.out.to(at::kFloat);
        lse = b.lse;
      } else {
        at::Tensor o = rows_of(out, p), l = batch_of(lse, p).narrow(2, p.piece.row0, p.piece.rows);
        merge_attention_block(o, l, b.out, b.lse);
      }
    }
    hop.wait();
    if (next.defined()) kv = next;
  }
  MemoryScope activation(outer);  // the output (and in fp32 the running buffer itself) is the layer's
  return {out.to(q.scalar_type()).transpose(1, 2), lse};
}

// One piece's share of dq (added at once) and of the held K/V's dK/dV (added once the accumulator
// for those K/V has arrived).
struct PieceKvGrads {
  BatchPiece piece;
  at::Tensor dk, dv;  // [b or 1, keys, h_kv, d]
};

std::array<at::Tensor, 3> ring_backward(Comm& comm, const at::Tensor& grad_out, const at::Tensor& q,
                                        const at::Tensor& k, const at::Tensor& v, const at::Tensor& out,
                                        const at::Tensor& lse, const RingDocStarts& docs) {
  // The costmodel counts the backward's ring buffers in the layer's backward moment, an activation
  // term (memory_activations.cpp LayerBackwardMoments::ring); the forward's in buffers.
  MemoryScope tag(MemCategory::kActivations);
  const int64_t cp = comm.cp(), n = q.size(1), heads = q.size(2), kv_heads = k.size(2);
  const at::Tensor g = grad_out.transpose(1, 2), qh = q.transpose(1, 2), oh = out.transpose(1, 2);
  const bool gqa = kernel_takes_gqa(q);
  at::Tensor dq = at::zeros(qh.sizes(), qh.options().dtype(at::kFloat));  // [b, h, n, d]
  at::Tensor kv = at::stack({k, v});
  at::Tensor acc = at::zeros(kv.sizes(), kv.options().dtype(at::kFloat));  // dK/dV of the K/V held
  at::Tensor acc_in;
  RingHop acc_hop;
  for (int64_t i = 0; i < cp; ++i) {
    at::Tensor next;
    RingHop kv_hop;
    if (i + 1 < cp) {
      next = at::empty_like(kv);
      kv_hop = comm.ring_post({kv}, {next}, kKvTag);
    }
    // The block's gradients first, so that the accumulator's hop overlaps them.
    std::vector<PieceKvGrads> pending;
    for (const BatchPiece& p : pieces_at(comm, docs, i, n)) {
      const BlockGrads b = block_backward(rows_of(g, p), rows_of(qh, p), keys_of(kv, 0, p, heads, gqa),
                                          keys_of(kv, 1, p, heads, gqa), rows_of(oh, p),
                                          batch_of(lse, p).narrow(2, p.piece.row0, p.piece.rows), p.piece.causal);
      rows_of(dq, p).add_(b.dq);
      pending.push_back({p, kv_grad(b.dk, kv_heads), kv_grad(b.dv, kv_heads)});
    }
    if (i > 0) {  // the accumulator of these K/V, from the rank that held them one step ago
      acc_hop.wait();
      acc = acc_in;
    }
    for (const PieceKvGrads& pg : pending) {
      const RingPiece& s = pg.piece.piece;
      batch_of(acc[0], pg.piece).narrow(1, s.key0, s.keys).add_(pg.dk);
      batch_of(acc[1], pg.piece).narrow(1, s.key0, s.keys).add_(pg.dv);
    }
    pending.clear();
    // On to the rank that holds these K/V next; after the last step that is their owner: home.
    acc_in = at::empty_like(acc);
    acc_hop = comm.ring_post({acc}, {acc_in}, kGradTag);
    kv_hop.wait();
    if (next.defined()) kv = next;
  }
  acc_hop.wait();
  const at::ScalarType dtype = q.scalar_type();
  return {dq.transpose(1, 2).to(dtype), acc_in[0].to(dtype), acc_in[1].to(dtype)};
}

// Documents as the autograd context keeps them: rows, then per row its count and its starts.
std::vector<int64_t> flatten_docs(const RingDocStarts& docs) {
  std::vector<int64_t> flat{static_cast<int64_t>(docs.size())};
  for (const std::vector<int64_t>& row : docs) {
    flat.push_back(static_cast<int64_t>(row.size()));
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return flat;
}

RingDocStarts unflatten_docs(const std::vector<int64_t>& flat) {
  RingDocStarts docs(static_cast<size_t>(flat.at(0)));
  size_t at = 1;
  for (std::vector<int64_t>& row : docs) {
    const auto count = static_cast<size_t>(flat.at(at++));
    row.assign(flat.begin() + static_cast<std::ptrdiff_t>(at), flat.begin() + static_cast<std::ptrdiff_t>(at + count));
    at += count;
  }
  return docs;
}

Comm& comm_of(AutogradContext* ctx) { return *reinterpret_cast<Comm*>(ctx->saved_data["comm"].toInt()); }

struct RingAttention : torch::autograd::Function<RingAttention> {
  static at::Tensor forward(AutogradContext* ctx, Comm* comm, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const RingDocStarts& docs) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    ctx->saved_data["docs"] = flatten_docs(docs);  // a copy: the caller's may be gone by the backward
    Forward f = ring_forward(*comm, q, k, v, docs);
    ctx->save_for_backward({q, k, v, f.out, f.lse});
    return f.out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list s = ctx->get_saved_variables();
    const RingDocStarts docs = unflatten_docs(ctx->saved_data["docs"].toIntVector());
    auto [dq, dk, dv] = ring_backward(comm_of(ctx), grad[0], s[0], s[1], s[2], s[3], s[4], docs);
    return {at::Tensor(), dq, dk, dv, at::Tensor()};  // no gradient for `comm` or the documents
  }
};

// A zigzag chunk: its first position in the whole sequence and its first row among the rank's n.
struct Chunk {
  int64_t global0, local0;
};

// The documents' parts inside [first, first + length): (document index, part's start, part's end).
struct DocPart {
  size_t doc;
  int64_t begin, end;
};
std::vector<DocPart> doc_parts(const std::vector<int64_t>& starts, int64_t seq_len, int64_t first, int64_t length) {
  std::vector<DocPart> parts;
  const int64_t last = first + length;
  size_t d = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), first) - starts.begin()) - 1;
  for (; d < starts.size() && starts[d] < last; ++d) {
    const int64_t end = d + 1 < starts.size() ? starts[d + 1] : seq_len;
    parts.push_back({d, std::max(first, starts[d]), std::min(last, end)});
  }
  return parts;
}

}  // namespace

std::vector<RingPiece> ring_pieces(const std::vector<int64_t>& doc_starts, int64_t seq_len, int64_t cp,
                                   int64_t cp_rank, int64_t src) {
  const int64_t chunk = seq_len / (2 * cp);
  const auto chunks_of = [&](int64_t rank) {
    return std::array<Chunk, 2>{Chunk{rank * chunk, 0}, Chunk{(2 * cp - 1 - rank) * chunk, chunk}};
  };
  std::vector<RingPiece> pieces;
  for (const Chunk& rows : chunks_of(cp_rank)) {
    const std::vector<DocPart> row_parts = doc_parts(doc_starts, seq_len, rows.global0, chunk);
    for (const Chunk& keys : chunks_of(src)) {
      if (keys.global0 > rows.global0) continue;  // the keys' chunk follows: causal attention sees none of it
      const bool same = keys.global0 == rows.global0;
      const std::vector<DocPart> key_parts = doc_parts(doc_starts, seq_len, keys.global0, chunk);
      size_t j = 0;
      for (const DocPart& r : row_parts) {
        while (j < key_parts.size() && key_parts[j].doc < r.doc) ++j;
        if (j == key_parts.size() || key_parts[j].doc != r.doc) continue;  // the document does not reach back there
        const DocPart& kp = key_parts[j];
        pieces.push_back({rows.local0 + r.begin - rows.global0, r.end - r.begin, keys.local0 + kp.begin - keys.global0,
                          kp.end - kp.begin, same});
      }
    }
  }
  return pieces;
}

void merge_attention_block(at::Tensor& out, at::Tensor& lse, const at::Tensor& out_b, const at::Tensor& lse_b) {
  const at::Tensor merged = at::logaddexp(lse, lse_b);
  out.mul_((lse - merged).exp_().unsqueeze(-1)).add_(out_b.to(at::kFloat) * (lse_b - merged).exp_().unsqueeze(-1));
  lse.copy_(merged);
}

at::Tensor ring_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 const RingDocStarts& docs) {
  TORCH_CHECK(comm.cp() > 1 && q.size(1) % 2 == 0, "ring_causal_attention: needs cp > 1 and 2 zigzag chunks");
  TORCH_CHECK(docs.empty() || static_cast<int64_t>(docs.size()) == q.size(0),
              "ring_causal_attention: documents for ", docs.size(), " rows, the batch has ", q.size(0));
  return RingAttention::apply(&comm, q, k, v, docs);
}

}  // namespace spplan::engine
