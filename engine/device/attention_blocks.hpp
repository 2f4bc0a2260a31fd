// One block of blockwise attention: rows of queries against a range of keys, in one kernel call
// that returns the log-sum-exp its backward needs, on this device's kernel (LibTorch's CPU flash
// kernel; CUDA's flash kernel in bf16/fp16 and its memory-efficient kernel in fp32 or under a mask).
// Ring attention (parallel/ring_attention.hpp) merges such blocks; windowed attention
// (model/window_attention.hpp) runs one per block of queries.
//
// Tensors in the kernels' layout [b, heads, rows, d]; the log-sum-exp [b, heads, rows] fp32.
// `bias` (optional): [rows, keys] in q's dtype, added to the scores (0 where a query sees a key, -inf
// where it does not: LibTorch's CPU kernel takes a mask only so); none with `causal`.
#pragma once

#include <ATen/core/Tensor.h>

namespace spplan::engine {

struct BlockOut {
  at::Tensor out, lse;
};
struct BlockGrads {
  at::Tensor dq, dk, dv;
};

BlockOut block_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                       const at::Tensor& bias = {});

// The block's exact share of dq, dk, dv, given the FINAL output and log-sum-exp of its rows: the
// kernel recomputes P = exp(S - lse) and D = rowsum(dO * O) from them, which are the whole
// attention's.
BlockGrads block_backward(const at::Tensor& grad, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const at::Tensor& out, const at::Tensor& lse, bool causal, const at::Tensor& bias = {});

// Whether the block kernel takes K/V with fewer heads than q (grouped-query): LibTorch's CPU flash
// kernel and CUDA's flash kernel do; CUDA's memory-efficient one (fp32, or under a bias) does not.
bool kernel_takes_gqa(const at::Tensor& q, bool biased = false);

// [b, h or h_kv, keys, d] -> [b, keys, h_kv, d]: expanded heads' gradients summed back to their K/V head.
at::Tensor kv_grad(const at::Tensor& g, int64_t kv_heads);

// K or V [b, h_kv, keys, d] in the kernel's layout, expanded to `heads` query heads (a copy) only
// for a kernel without grouped-query attention.
at::Tensor heads_for_kernel(const at::Tensor& x, int64_t heads, bool gqa);

}  // namespace spplan::engine
