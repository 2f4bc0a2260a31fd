#include "engine/parallel/ring_attention.hpp"

#include <array>
#include <tuple>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/attention_blocks.hpp"
#include "engine/device/memory_meter.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// ---- which rows meet which keys at a step (the zigzag, ring_attention.hpp) -------------------

struct Span {
  int64_t row0, rows, key0, keys;
  bool causal;
};

Span span_at(int64_t step, int64_t cp_rank, int64_t src, int64_t n) {
  if (step == 0) return {0, n, 0, n, true};           // local K/V: causal over both chunks
  if (src < cp_rank) return {0, n, 0, n / 2, false};  // src's first chunk precedes both of ours
  return {n / 2, n / 2, 0, n, false};                 // our second chunk follows both of src's
}

// K or V (`which` 0 or 1) of the K/V buffer [2, b, n, h_kv, d], the span's keys, in the kernel's
// layout; expanded to the query heads (a copy per block) only for a kernel without GQA.
at::Tensor keys_of(const at::Tensor& kv, int64_t which, const Span& s, int64_t heads, bool gqa) {
  return heads_for_kernel(kv[which].narrow(1, s.key0, s.keys).transpose(1, 2), heads, gqa);  // [b, h_kv, keys, d]
}

int64_t src_at(const Comm& comm, int64_t step) { return (comm.cp_rank() - step + comm.cp()) % comm.cp(); }

// Hop tags: the K/V and the dK/dV accumulators can be in flight at once.
constexpr int kKvTag = 0, kGradTag = 1;

struct Forward {
  at::Tensor out;  // [b, n, h, d], q's dtype
  at::Tensor lse;  // [b, h, n], fp32
};

Forward ring_forward(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const MemCategory outer = memory_category();
  MemoryScope tag(MemCategory::kBuffers);
  const int64_t cp = comm.cp(), n = q.size(1), heads = q.size(2);
  const at::Tensor qh = q.transpose(1, 2);  // [b, h, n, d]
  const bool gqa = kernel_takes_gqa(q);
  at::Tensor kv = at::stack({k, v});        // what the hops carry: [2, b, n, h_kv, d], contiguous
  at::Tensor out, lse;                      // the running merge, fp32
  for (int64_t i = 0; i < cp; ++i) {
    at::Tensor next;
    RingHop hop;
    if (i + 1 < cp) {  // the next step's K/V travel while this block computes
      next = at::empty_like(kv);
      hop = comm.ring_post({kv}, {next}, kKvTag);
    }
    const Span s = span_at(i, comm.cp_rank(), src_at(comm, i), n);
    BlockOut b;
    {
      // The first block's log-sum-exp (and in fp32 its output) becomes the running one, which the
      // backward keeps: the layer's activations, as the single-process kernel's.
      MemoryScope block_tag(i == 0 ? outer : MemCategory::kBuffers);
      b = block_forward(qh.narrow(2, s.row0, s.rows), keys_of(kv, 0, s, heads, gqa), keys_of(kv, 1, s, heads, gqa),
                        s.causal);
    }
    if (i == 0) {  // the local block covers every row
      out = b.out.to(at::kFloat);
      lse = b.lse;
    } else {
      at::Tensor o = out.narrow(2, s.row0, s.rows), l = lse.narrow(2, s.row0, s.rows);
      merge_attention_block(o, l, b.out, b.lse);
    }
    hop.wait();
    if (next.defined()) kv = next;
  }
  MemoryScope activation(outer);  // the output (and in fp32 the running buffer itself) is the layer's
  return {out.to(q.scalar_type()).transpose(1, 2), lse};
}

std::array<at::Tensor, 3> ring_backward(Comm& comm, const at::Tensor& grad_out, const at::Tensor& q,
                                        const at::Tensor& k, const at::Tensor& v, const at::Tensor& out,
                                        const at::Tensor& lse) {
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
    const Span s = span_at(i, comm.cp_rank(), src_at(comm, i), n);
    const BlockGrads b = block_backward(g.narrow(2, s.row0, s.rows), qh.narrow(2, s.row0, s.rows),
                                        keys_of(kv, 0, s, heads, gqa), keys_of(kv, 1, s, heads, gqa),
                                        oh.narrow(2, s.row0, s.rows), lse.narrow(2, s.row0, s.rows), s.causal);
    dq.narrow(2, s.row0, s.rows).add_(b.dq);
    if (i > 0) {  // the accumulator of these K/V, from the rank that held them one step ago
      acc_hop.wait();
      acc = acc_in;
    }
    acc[0].narrow(1, s.key0, s.keys).add_(kv_grad(b.dk, kv_heads));
    acc[1].narrow(1, s.key0, s.keys).add_(kv_grad(b.dv, kv_heads));
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

Comm& comm_of(AutogradContext* ctx) { return *reinterpret_cast<Comm*>(ctx->saved_data["comm"].toInt()); }

struct RingAttention : torch::autograd::Function<RingAttention> {
  static at::Tensor forward(AutogradContext* ctx, Comm* comm, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    Forward f = ring_forward(*comm, q, k, v);
    ctx->save_for_backward({q, k, v, f.out, f.lse});
    return f.out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const variable_list s = ctx->get_saved_variables();
    auto [dq, dk, dv] = ring_backward(comm_of(ctx), grad[0], s[0], s[1], s[2], s[3], s[4]);
    return {at::Tensor(), dq, dk, dv};  // no gradient for `comm`
  }
};

}  // namespace

void merge_attention_block(at::Tensor& out, at::Tensor& lse, const at::Tensor& out_b, const at::Tensor& lse_b) {
  const at::Tensor merged = at::logaddexp(lse, lse_b);
  out.mul_((lse - merged).exp_().unsqueeze(-1)).add_(out_b.to(at::kFloat) * (lse_b - merged).exp_().unsqueeze(-1));
  lse.copy_(merged);
}

at::Tensor ring_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(comm.cp() > 1 && q.size(1) % 2 == 0, "ring_causal_attention: needs cp > 1 and 2 zigzag chunks");
  return RingAttention::apply(&comm, q, k, v);
}

}  // namespace spplan::engine
