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

}  // namespace

at::Tensor seq_to_heads(Comm& comm, const at::Tensor& x) { return SeqToHeads::apply(&comm, x); }
at::Tensor heads_to_seq(Comm& comm, const at::Tensor& x) { return HeadsToSeq::apply(&comm, x); }

}  // namespace spplan::engine
