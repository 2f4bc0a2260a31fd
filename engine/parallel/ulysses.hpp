// The Ulysses all-to-alls as autograd functions (DeepSpeed DistributedAttention, yunchang's
// all_to_all_4D). Each is the other's backward. P = comm.sp(); b batch, s sequence, h heads, d head dim.
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

// [b, s/P, h, d] (my tokens, all heads) -> [b, s, h/P, d] (all tokens, my heads). REQUIRES h % P == 0.
at::Tensor seq_to_heads(Comm& comm, const at::Tensor& x);

// [b, s, h/P, d] (all tokens, my heads) -> [b, s/P, h, d] (my tokens, all heads). REQUIRES s % P == 0.
at::Tensor heads_to_seq(Comm& comm, const at::Tensor& x);

}  // namespace spplan::engine
