// Causal attention over a sliding window of w keys (Mistral's sliding_window): each query sees its
// last w keys, itself included (transformers' sliding_window_overlay; FlashAttention's
// window_size (w - 1, 0)). SDPA takes no window, so the sequence runs in blocks of w queries, each
// in one kernel call over the keys its rows may see, w - 1 before the block and the block's own:
//   block 0          : queries [0, w) against keys [0, w), causal (no mask);
//   block j >= 1     : queries [j w, j w + n) against keys [j w - w + 1, j w + n), under the band
//                      mask key c visible to row a when a <= c <= a + w - 1 (one [w, 2w - 1] mask
//                      shared by every block, the last one's a corner of it, added to the scores
//                      as 0 or -inf in q's dtype).
// The kernel computes a masked block whole: a block's call does n (n + w - 1) query-key pairs,
// about twice the window's n w (what the costmodel prices for it: TrainingStack::
// window_in_masked_blocks). One autograd function saves what a single call saves (q, k, v, the
// output and its log-sum-exp); its backward runs the blocks again, dq written per block, dK and dV
// added where consecutive blocks' keys overlap (in their own dtype).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace spplan::engine {

// q [b, s, h, d], k and v [b, s, h_kv, d] (h % h_kv == 0) -> [b, s, h, d]. REQUIRES: window > 0
// and s > window (shorter sequences are causal attention).
at::Tensor window_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window);

// The band mask of a full block: bool [w, 2w - 1], true where row a sees key c (a <= c <= a + w - 1).
at::Tensor window_band_mask(int64_t window, const at::TensorOptions& options);

}  // namespace spplan::engine
