#include "engine/model/attention.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/model/window_attention.hpp"
#include "engine/parallel/ring_attention.hpp"
#include "engine/parallel/ulysses.hpp"

namespace spplan::engine {
namespace {

// sdp::SDPBackend: -1 error, 0 math (builds the s x s scores), 1 flash, 2 memory-efficient, 3 cuDNN.
constexpr int64_t kMathBackend = 0;

int64_t sdpa_backend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias, bool causal,
                     bool gqa) {
  return at::_fused_sdp_choice(q, k, v, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt, 0.0, causal,
                               std::nullopt, gqa);
}

[[noreturn]] void refuse_math(int64_t backend) {
  TORCH_CHECK(false, "attention: LibTorch would use SDPA backend ", backend,
              " (math), which materialises the s x s scores; refusing");
}

at::Tensor sdpa(const at::Tensor& qt, const at::Tensor& kt, const at::Tensor& vt, const at::Tensor& bias, bool causal,
                bool gqa) {
  return at::scaled_dot_product_attention(qt, kt, vt, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt,
                                          0.0, causal, std::nullopt, gqa);
}

// causal_attention, or every query over every key (under `bias` where defined): a blockwise
// kernel, K and V expanded where the native grouped-query call would not be one.
at::Tensor blockwise_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                               bool causal) {
  // SDPA wants [b, h, s, d]; transposes are views, the kernels read strided inputs.
  const at::Tensor qt = q.transpose(1, 2), kt = k.transpose(1, 2), vt = v.transpose(1, 2);
  if (k.size(2) == q.size(2)) {
    const int64_t backend = sdpa_backend(qt, kt, vt, bias, causal, false);
    if (backend <= kMathBackend) refuse_math(backend);
    return sdpa(qt, kt, vt, bias, causal, false).transpose(1, 2);
  }
  const int64_t native = sdpa_backend(qt, kt, vt, bias, causal, true);
  // The expanded call is only asked about (and built) when the native one would not be blockwise.
  at::Tensor ke, ve;
  int64_t expanded = kMathBackend;
  if (native <= kMathBackend) {
    ke = expand_kv_heads(k, q.size(2)).transpose(1, 2);
    ve = expand_kv_heads(v, q.size(2)).transpose(1, 2);
    expanded = sdpa_backend(qt, ke, ve, bias, causal, false);
  }
  switch (choose_gqa_path(native, expanded)) {
    case GqaPath::kNative: return sdpa(qt, kt, vt, bias, causal, true).transpose(1, 2);
    case GqaPath::kExpandKv: return sdpa(qt, ke, ve, bias, causal, false).transpose(1, 2);
    case GqaPath::kRefuse: break;
  }
  refuse_math(native);
}

}  // namespace

GqaPath choose_gqa_path(int64_t backend_native, int64_t backend_expanded) {
  if (backend_native > kMathBackend) return GqaPath::kNative;
  if (backend_expanded > kMathBackend) return GqaPath::kExpandKv;
  return GqaPath::kRefuse;
}

at::Tensor expand_kv_heads(const at::Tensor& kv, int64_t heads) {
  return kv.repeat_interleave(heads / kv.size(2), 2);  // [b, s, h_kv, d] -> [b, s, h, d]
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return blockwise_attention(q, k, v, {}, true);
}

at::Tensor full_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias) {
  return blockwise_attention(q, k, v, bias, false);
}

at::Tensor windowed_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window) {
  return window > 0 && q.size(1) > window ? window_causal_attention(q, k, v, window) : causal_attention(q, k, v);
}

at::Tensor document_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                     const DocStarts& starts, int64_t window) {
  if (starts.empty()) return windowed_causal_attention(q, k, v, window);
  const int64_t s = q.size(1);
  std::vector<at::Tensor> rows;
  for (int64_t r = 0; r < q.size(0); ++r) {
    const std::vector<int64_t>& row = starts[static_cast<size_t>(r)];
    std::vector<at::Tensor> docs;
    for (size_t i = 0; i < row.size(); ++i) {
      const int64_t first = row[i], n = (i + 1 < row.size() ? row[i + 1] : s) - first;
      docs.push_back(windowed_causal_attention(q.narrow(0, r, 1).narrow(1, first, n), k.narrow(0, r, 1).narrow(1, first, n),
                                               v.narrow(0, r, 1).narrow(1, first, n), window));
    }
    rows.push_back(docs.size() == 1 ? docs[0] : at::cat(docs, 1));
  }
  return rows.size() == 1 ? rows[0] : at::cat(rows, 0);
}

at::Tensor sp_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const DocStarts& starts, int64_t window) {
  const int64_t P = comm.sp();
  // With a ring (cp > 1) the rank's tokens are 2 zigzag chunks, masked per document in each block
  // when packed (ring_attention.hpp); no window (refused).
  if (P == 1) {
    return comm.cp() > 1 ? ring_causal_attention(comm, q, k, v, starts) : document_causal_attention(q, k, v, starts, window);
  }
  const int64_t hq = q.size(2) / P, hkv = std::max<int64_t>(k.size(2) / P, 1);  // heads per rank after the exchange
  const at::Tensor all_tokens = qkv_to_heads(comm, q, k, v);  // [b, s, hq + 2 hkv, d]
  const at::Tensor qh = all_tokens.narrow(2, 0, hq), kh = all_tokens.narrow(2, hq, hkv),
                   vh = all_tokens.narrow(2, hq + hkv, hkv);
  // Ulysses x ring: the SP group's exchange gave this CP rank's 2 zigzag chunks, h/P heads.
  const at::Tensor out =
      comm.cp() > 1 ? ring_causal_attention(comm, qh, kh, vh, starts) : document_causal_attention(qh, kh, vh, starts, window);
  return heads_to_seq(comm, out);  // [b, s/P, h, d]
}

std::string to_string(SdpaBackend b) {
  switch (b) {
    case SdpaBackend::kCudnn: return "cudnn";
    case SdpaBackend::kFlash: return "flash";
    case SdpaBackend::kLibTorch: break;
  }
  return "libtorch";
}

SdpaBackend choose_sdpa_backend(const std::vector<SdpaBackend>& candidates,
                                const std::function<std::optional<double>(SdpaBackend)>& time_s) {
  SdpaBackend best = SdpaBackend::kLibTorch;
  std::optional<double> best_s;
  for (SdpaBackend b : candidates) {
    const std::optional<double> t = time_s(b);
    if (t && (!best_s || *t < *best_s)) {
      best = b;
      best_s = t;
    }
  }
  return best;
}

void use_sdpa_backend(SdpaBackend b) {
  at::Context& ctx = at::globalContext();
  const bool all = b == SdpaBackend::kLibTorch;
  ctx.setSDPUseFlash(all || b == SdpaBackend::kFlash);
  ctx.setSDPUseCuDNN(all || b == SdpaBackend::kCudnn);
  ctx.setSDPUseMemEfficient(all);
}

namespace {

// Seconds of one causal_attention forward + backward at `shape` with only `b` enabled, the best
// of 3 after a warm-up; nullopt when the backend refuses the shapes (LibTorch raises).
std::optional<double> time_attention(SdpaBackend b, const AttentionShape& shape, c10::Device device) {
  using Clock = std::chrono::steady_clock;
  use_sdpa_backend(b);
  const auto opts = at::TensorOptions().dtype(shape.dtype).device(device);
  const at::Tensor q = at::randn({shape.batch, shape.tokens, shape.heads, shape.head_dim}, opts).requires_grad_(true);
  const at::Tensor k = at::randn({shape.batch, shape.tokens, shape.kv_heads, shape.head_dim}, opts).requires_grad_(true);
  const at::Tensor v = at::randn_like(k).requires_grad_(true);
  const at::Tensor dout = at::randn_like(q);
  try {
    std::optional<double> best;
    for (int i = 0; i < 4; ++i) {  // the first pass warms up (cuDNN builds its execution plan)
      synchronize(device);
      const Clock::time_point start = Clock::now();
      const at::Tensor out = causal_attention(q, k, v);
      torch::autograd::grad({out}, {q, k, v}, {dout});
      synchronize(device);
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (i > 0 && (!best || s < *best)) best = s;
    }
    return best;
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}

// The tokens the probe runs at: the run's, at most 32K.
constexpr int64_t kProbeMaxTokens = int64_t{1} << 15;

std::optional<SdpaBackend> backend_from_env() {
  const char* v = std::getenv("SPPLAN_ENGINE_SDPA_BACKEND");
  if (v == nullptr || *v == 0) return std::nullopt;
  for (SdpaBackend b : {SdpaBackend::kCudnn, SdpaBackend::kFlash, SdpaBackend::kLibTorch}) {
    if (to_string(b) == v) return b;
  }
  TORCH_CHECK(false, "SPPLAN_ENGINE_SDPA_BACKEND: value \"", v, "\" (allowed: cudnn, flash, libtorch)");
}

}  // namespace

std::optional<SdpaBackend> named_sdpa_backend(AttentionKernel kernel, bool named) {
  if (named && kernel == AttentionKernel::kFlash2) return SdpaBackend::kFlash;
  return std::nullopt;
}

SdpaChoice select_sdpa_backend(const AttentionShape& shape, c10::Device device, std::optional<SdpaBackend> named) {
  SdpaChoice choice;
  if (!device.is_cuda()) {
    choice.how = "cpu";
    use_sdpa_backend(choice.backend);
    return choice;
  }
  if (const std::optional<SdpaBackend> forced = backend_from_env()) {
    choice = {*forced, "SPPLAN_ENGINE_SDPA_BACKEND"};
    use_sdpa_backend(choice.backend);
    return choice;
  }
  if (named) {
    choice = {*named, "the plan's attention flash2"};
    use_sdpa_backend(choice.backend);
    return choice;
  }
  AttentionShape probe = shape;
  probe.tokens = std::min(shape.tokens, kProbeMaxTokens);
  std::string how = "measured at " + std::to_string(probe.tokens) + " tokens:";
  choice.backend = choose_sdpa_backend({SdpaBackend::kCudnn, SdpaBackend::kFlash}, [&](SdpaBackend b) {
    const std::optional<double> t = time_attention(b, probe, device);
    char ms[32] = "unavailable";
    if (t) std::snprintf(ms, sizeof ms, "%.3f ms", *t * 1e3);
    how += " " + to_string(b) + " " + ms;
    return t;
  });
  choice.how = how;
  use_sdpa_backend(choice.backend);
  return choice;
}

}  // namespace spplan::engine
