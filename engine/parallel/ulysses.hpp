// The Ulysses all-to-alls as autograd functions (DeepSpeed DistributedAttention, yunchang's
// all_to_all_4D). Each is the other's backward. P = comm.sp(); b batch, s sequence, h heads, d head dim.
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

// [b, s/P, h, d] (my tokens, all heads) -> [b, s, h/P, d] (all tokens, my heads). REQUIRES h % P == 0.
at::Tensor seq_to_heads(Comm& comm, const at::Tensor& x);

// Attention's q [b, s/P, h, d], k and v [b, s/P, h_kv, d] (my tokens) -> [b, s, h/P + 2 h_kv', d]:
// all tokens of my h/P query heads, then my h_kv' key heads, then my value heads, in one exchange.
// h_kv' = h_kv / P, or 1 when h_kv < P (each rank gets KV head p * h_kv / P, replicated on the
// way without a replicated copy). Its memory: one send buffer and the result, besides q, k, v.
// REQUIRES h % P == 0 and h_kv % P == 0 or P % h_kv == 0.
at::Tensor qkv_to_heads(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// [b, s, h/P, d] (all tokens, my heads) -> [b, s/P, h, d] (my tokens, all heads). REQUIRES s % P == 0.
at::Tensor heads_to_seq(Comm& comm, const at::Tensor& x);

}  // namespace spplan::engine
