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
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"
#include "engine/parallel/ring_attention.hpp"
#include "planner/config/trainer_spec.hpp"

namespace spplan::engine {

// q [b, s, h, d], k and v [b, s, h_kv, d] with h % h_kv == 0 (grouped-query) -> [b, s, h, d].
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);
// The same kernel without the causal mask, every query over every key (the kind of call a ring's
// off-diagonal blocks make), under an additive `bias` [s, s] in q's dtype where one is given (as
// the window's masked blocks run): what `spplan calibrate` times beside causal_attention to tell
// the kernel's rate from what its diagonal tiles and a bias cost (calibrate_probes.hpp).
at::Tensor full_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias = {});

// How grouped-query attention runs, from SDPA's backend choice (sdp::SDPBackend: 0 math, > 0 a
// blockwise kernel) for the native GQA call and for the call with K, V expanded to the query heads.
enum class GqaPath { kNative, kExpandKv, kRefuse };
GqaPath choose_gqa_path(int64_t backend_native, int64_t backend_expanded);

// K, V [b, s, h_kv, d] -> [b, s, h, d]: query head j reads KV head j / (h / h_kv).
at::Tensor expand_kv_heads(const at::Tensor& kv, int64_t heads);

// Packed documents: per batch row, where each document of the full sequence starts (0 first).
// Empty: the row is one causal sequence. The ring's type (parallel/ring_attention.hpp).
using DocStarts = RingDocStarts;

// Causal attention inside each document only (block-diagonal causal): each document's rows run
// through causal_attention alone (windowed_causal_attention with a window), so no s x s tensor exists. The outputs are
// concatenated: one more attention output alive while the layer's output projection reads it.
at::Tensor document_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                     const DocStarts& starts, int64_t window = 0);

// Causal attention, over a sliding window of `window` keys (> 0, window_attention.hpp) where the
// rows are more than it.
at::Tensor windowed_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window);

// The same for one SP rank holding s/P tokens: q [b, s/P, h, d], k and v [b, s/P, h_kv, d] ->
// [b, s/P, h, d]. One all-to-all takes q, k, v to "all tokens, h/P heads", local attention runs
// (per document when `starts` has any), one all-to-all brings the output back. KV heads are
// replicated P/h_kv times when h_kv < P. With a ring (comm.cp() > 1) the rank holds its share of
// its CP rank's 2 zigzag chunks; the exchange gathers those chunks, and ring attention
// (parallel/ring_attention.hpp) over the CP group replaces the local attention (Ulysses x ring;
// with sp 1, ring attention alone), per document in each block when `starts` has any. A `window`
// (> 0) windows the local attention (each rank holds the whole sequence for its heads).
// REQUIRES: no window when cp > 1.
at::Tensor sp_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const DocStarts& starts = {}, int64_t window = 0);

// ---- which blockwise SDPA kernel runs (CUDA) --------------------------------------------------
//
// On an H100 in bf16, cuDNN's attention runs causal attention at about twice FlashAttention-2's
// rate at 4K-16K tokens (gpu_h100_kernels.jsonl: 636 against 324 TFLOPS forward at 16K, d 128),
// and LibTorch 2.11 already prefers it; on other GPUs, head sizes or dtypes the order can differ
// or cuDNN may not run at all. So the engine measures both once at start-up on the run's shapes
// and uses the faster (never the math backend, which builds the s x s scores).
enum class SdpaBackend {
  kLibTorch,  // whatever LibTorch picks (every blockwise kernel enabled): the CPU, and the fallback
  kCudnn,
  kFlash,
};
std::string to_string(SdpaBackend b);  // "libtorch", "cudnn", "flash"

// The fastest candidate by `time_s` (seconds for one forward + backward, nullopt when it cannot
// run these shapes); kLibTorch when none can. Ties keep the earlier candidate.
SdpaBackend choose_sdpa_backend(const std::vector<SdpaBackend>& candidates,
                                const std::function<std::optional<double>(SdpaBackend)>& time_s);

// Restricts LibTorch's SDPA to `b` for this process (kLibTorch: all blockwise kernels; the math
// backend stays allowed only as LibTorch's own fallback, which causal_attention refuses).
void use_sdpa_backend(SdpaBackend b);

// The shapes attention runs at on one rank: after Ulysses, all s tokens and h/P query heads.
struct AttentionShape {
  int64_t batch = 1, tokens = 0, heads = 0, kv_heads = 0, head_dim = 0;
  at::ScalarType dtype = at::kFloat;
};

// The backend a plan's kernel names: LibTorch's flash kernels, FlashAttention 2's, for a plan that
// names flash2 (what it was priced at); none for sdpa or a kernel the trainer's record settled,
// which leave the choice to select_sdpa_backend's measurement.
std::optional<SdpaBackend> named_sdpa_backend(AttentionKernel kernel, bool named);

// What one rank uses: on a CPU kLibTorch without measuring; on CUDA SPPLAN_ENGINE_SDPA_BACKEND
// (cudnn, flash or libtorch) when set, else `named` (named_sdpa_backend), else the fastest of cuDNN
// and flash, each timed as the best of 3 forward + backward passes after a warm-up, at the run's
// shapes with at most 32K tokens (the ranking holds at longer sequences, and the probe's buffers
// stay below the run's). Calls use_sdpa_backend with the choice. Collective: none (every rank
// measures the same shapes).
struct SdpaChoice {
  SdpaBackend backend = SdpaBackend::kLibTorch;
  // "cpu", "measured: cudnn 1.23 ms, flash 2.34 ms", "SPPLAN_ENGINE_SDPA_BACKEND",
  // "the plan's attention flash2"
  std::string how;
};
SdpaChoice select_sdpa_backend(const AttentionShape& shape, c10::Device device,
                               std::optional<SdpaBackend> named = std::nullopt);

}  // namespace spplan::engine
