// Causal self-attention, single-process and Ulysses sequence-parallel.
//
// Memory stays O(s*h), never s x s: at::scaled_dot_product_attention runs LibTorch's CPU flash
// kernel, which walks the sequence in query blocks (and key blocks within each), keeping one block
// of scores per thread, and saves only the output and the log-sum-exp for the backward. We refuse to
// run if LibTorch would pick its s x s "math" fallback instead (it raises, with the reason). On CUDA
// fp32 it is the memory-efficient kernel, blockwise in the same way.
//
// Grouped-query attention: SDPA takes K and V with fewer heads (enable_gqa) where its kernel does;
// CUDA's memory-efficient kernel (the fp32 one) does not, and LibTorch then falls back to math.
// There K and V are expanded to the query heads first, as Hugging Face's repeat_kv does, so the
// blockwise kernel runs (the expanded copies cost 2 (h - h_kv) d bytes per token and element).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "engine/comm.hpp"

namespace spplan::engine {

// q [b, s, h, d], k and v [b, s, h_kv, d] with h % h_kv == 0 (grouped-query) -> [b, s, h, d].
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// How grouped-query attention runs, from SDPA's backend choice (sdp::SDPBackend: 0 math, > 0 a
// blockwise kernel) for the native GQA call and for the call with K, V expanded to the query heads.
enum class GqaPath { kNative, kExpandKv, kRefuse };
GqaPath choose_gqa_path(int64_t backend_native, int64_t backend_expanded);

// K, V [b, s, h_kv, d] -> [b, s, h, d]: query head j reads KV head j / (h / h_kv).
at::Tensor expand_kv_heads(const at::Tensor& kv, int64_t heads);

// The same for one SP rank holding s/P tokens: q [b, s/P, h, d], k and v [b, s/P, h_kv, d] ->
// [b, s/P, h, d]. One all-to-all takes q, k, v to "all tokens, h/P heads", local attention runs,
// one all-to-all brings the output back. KV heads are replicated P/h_kv times when h_kv < P.
at::Tensor sp_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace spplan::engine
