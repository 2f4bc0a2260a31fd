#include "engine/parallel/ulysses.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/memory_meter.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor exchange(Comm& comm, at::Tensor send) {
  MemoryScope tag(MemCategory::kBuffers);  // send/recv copies are the all-to-all buffers
  at::Tensor recv = at::empty_like(send);
  comm.all_to_all_sp(recv, send);
  return recv;
}

at::Tensor seq_to_heads_raw(Comm& comm, const at::Tensor& x) {
  const int64_t P = comm.sp(), b = x.size(0), sl = x.size(1), h = x.size(2), d = x.size(3);
  at::Tensor send = x.reshape({b, sl, P, h / P, d})  // [b, s/P, h, d] -> [b, s/P, P, h/P, d]
                        .permute({2, 0, 1, 3, 4})      // -> [P, b, s/P, h/P, d]
                        .contiguous();
  at::Tensor recv = exchange(comm, send);            // [P, b, s/P, h/P, d], chunk p = tokens of rank p
  return recv.permute({1, 0, 2, 3, 4})               // [P, b, s/P, h/P, d] -> [b, P, s/P, h/P, d]
      .reshape({b, P * sl, h / P, d});               // -> [b, s, h/P, d]
}

at::Tensor heads_to_seq_raw(Comm& comm, const at::Tensor& x) {
  const int64_t P = comm.sp(), b = x.size(0), s = x.size(1), hl = x.size(2), d = x.size(3);
  at::Tensor send = x.reshape({b, P, s / P, hl, d})  // [b, s, h/P, d] -> [b, P, s/P, h/P, d]
                        .permute({1, 0, 2, 3, 4})      // -> [P, b, s/P, h/P, d]
                        .contiguous();
  at::Tensor recv = exchange(comm, send);            // [P, b, s/P, h/P, d], chunk p = heads of rank p
  return recv.permute({1, 2, 0, 3, 4})               // [P, b, s/P, h/P, d] -> [b, s/P, P, h/P, d]
      .reshape({b, s / P, P * hl, d});               // -> [b, s/P, h, d]
}

// Heads per rank after the exchange: h/P query heads; h_kv/P key (and value) heads, or one
// replicated head when h_kv < P.
struct QkvHeads {
  int64_t P, q, kv, kv_replicas;  // kv_replicas: ranks that share one KV head
  int64_t width() const { return q + 2 * kv; }
};

QkvHeads qkv_heads(int64_t P, int64_t h, int64_t h_kv) {
  const int64_t replicas = h_kv < P ? P / h_kv : 1;
  return {P, h / P, h_kv * replicas / P, replicas};
}

// Writes k or v [b, s/P, h_kv, d] into its part of the send buffer, [P, b, s/P, kv, d]: rank p's
// heads in chunk p, a shared head copied into each of its replicas' chunks straight from k.
void pack_kv(at::Tensor dst, const at::Tensor& x, const QkvHeads& n) {
  const int64_t b = x.size(0), sl = x.size(1), h_kv = x.size(2), d = x.size(3);
  if (n.kv_replicas == 1) {
    dst.copy_(x.reshape({b, sl, n.P, n.kv, d}).permute({2, 0, 1, 3, 4}));
    return;
  }
  dst.view({h_kv, n.kv_replicas, b, sl, 1, d})
      .copy_(x.permute({2, 0, 1, 3}).view({h_kv, 1, b, sl, 1, d}).expand({h_kv, n.kv_replicas, b, sl, 1, d}));
}

// The gradient of pack_kv: chunk p's heads back to [b, s/P, h_kv, d], replicas summed.
at::Tensor unpack_kv(const at::Tensor& src, const QkvHeads& n, int64_t h_kv) {
  const int64_t b = src.size(1), sl = src.size(2), d = src.size(4);
  if (n.kv_replicas == 1) return src.permute({1, 2, 0, 3, 4}).reshape({b, sl, h_kv, d});
  return src.view({h_kv, n.kv_replicas, b, sl, d}).sum(1).permute({1, 2, 0, 3});
}

Comm& comm_of(AutogradContext* ctx) { return *reinterpret_cast<Comm*>(ctx->saved_data["comm"].toInt()); }

struct SeqToHeads : torch::autograd::Function<SeqToHeads> {
  static at::Tensor forward(AutogradContext* ctx, Comm* comm, const at::Tensor& x) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    return seq_to_heads_raw(*comm, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    return {at::Tensor(), heads_to_seq_raw(comm_of(ctx), grad[0])};  // no gradient for `comm`
  }
};

struct HeadsToSeq : torch::autograd::Function<HeadsToSeq> {
  static at::Tensor forward(AutogradContext* ctx, Comm* comm, const at::Tensor& x) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    return heads_to_seq_raw(*comm, x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    return {at::Tensor(), seq_to_heads_raw(comm_of(ctx), grad[0])};
  }
};

// Packs q, k, v straight into the send buffer (no packed copy, no replicated K/V), exchanges it,
// and frees it before attention allocates: what is alive at the exchange is q, k, v, the send
// buffer and the received tokens (the costmodel's Ulysses moment, memory_activations.cpp).
struct QkvToHeads : torch::autograd::Function<QkvToHeads> {
  static at::Tensor forward(AutogradContext* ctx, Comm* comm, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    ctx->saved_data["h"] = q.size(2);
    ctx->saved_data["h_kv"] = k.size(2);
    const QkvHeads n = qkv_heads(comm->sp(), q.size(2), k.size(2));
    const int64_t b = q.size(0), sl = q.size(1), d = q.size(3);
    at::Tensor send;
    {
      MemoryScope tag(MemCategory::kBuffers);
      send = at::empty({n.P, b, sl, n.width(), d}, q.options());
    }
    send.narrow(3, 0, n.q).copy_(q.reshape({b, sl, n.P, n.q, d}).permute({2, 0, 1, 3, 4}));
    pack_kv(send.narrow(3, n.q, n.kv), k, n);
    pack_kv(send.narrow(3, n.q + n.kv, n.kv), v, n);
    const at::Tensor recv = exchange(*comm, send);  // [P, b, s/P, width, d], chunk p = tokens of rank p
    send.reset();
    return recv.permute({1, 0, 2, 3, 4}).reshape({b, n.P * sl, n.width(), d});
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    Comm& comm = comm_of(ctx);
    const int64_t h = ctx->saved_data["h"].toInt(), h_kv = ctx->saved_data["h_kv"].toInt(), P = comm.sp();
    const int64_t b = grad[0].size(0), sl = grad[0].size(1) / P, w = grad[0].size(2), d = grad[0].size(3);
    at::Tensor send = grad[0].reshape({b, P, sl, w, d}).permute({1, 0, 2, 3, 4}).contiguous();
    const at::Tensor recv = exchange(comm, send);  // chunk p = rank p's heads of my tokens
    send.reset();
    const QkvHeads n = qkv_heads(P, h, h_kv);
    const at::Tensor dq = recv.narrow(3, 0, n.q).permute({1, 2, 0, 3, 4}).reshape({b, sl, h, d});
    return {at::Tensor(), dq, unpack_kv(recv.narrow(3, n.q, n.kv), n, h_kv),
            unpack_kv(recv.narrow(3, n.q + n.kv, n.kv), n, h_kv)};
  }
};

}  // namespace

at::Tensor qkv_to_heads(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return QkvToHeads::apply(&comm, q, k, v);
}

at::Tensor seq_to_heads(Comm& comm, const at::Tensor& x) { return SeqToHeads::apply(&comm, x); }
at::Tensor heads_to_seq(Comm& comm, const at::Tensor& x) { return HeadsToSeq::apply(&comm, x); }

}  // namespace spplan::engine
