#include "engine/attention.hpp"

#include <ATen/ATen.h>

#include "engine/ulysses.hpp"

namespace spplan::engine {
namespace {

// sdp::SDPBackend: -1 error, 0 math (builds the s x s scores), 1 flash, 2 memory-efficient, 3 cuDNN.
constexpr int64_t kMathBackend = 0;

int64_t sdpa_backend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool gqa) {
  return at::_fused_sdp_choice(q, k, v, {}, 0.0, /*is_causal=*/true, std::nullopt, gqa);
}

[[noreturn]] void refuse_math(int64_t backend) {
  TORCH_CHECK(false, "causal_attention: LibTorch would use SDPA backend ", backend,
              " (math), which materialises the s x s scores; refusing");
}

at::Tensor sdpa(const at::Tensor& qt, const at::Tensor& kt, const at::Tensor& vt, bool gqa) {
  return at::scaled_dot_product_attention(qt, kt, vt, {}, 0.0, /*is_causal=*/true, std::nullopt, gqa);
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
  // SDPA wants [b, h, s, d]; transposes are views, the kernels read strided inputs.
  const at::Tensor qt = q.transpose(1, 2), kt = k.transpose(1, 2), vt = v.transpose(1, 2);
  if (k.size(2) == q.size(2)) {
    const int64_t backend = sdpa_backend(qt, kt, vt, false);
    if (backend <= kMathBackend) refuse_math(backend);
    return sdpa(qt, kt, vt, false).transpose(1, 2);
  }
  const int64_t native = sdpa_backend(qt, kt, vt, true);
  // The expanded call is only asked about (and built) when the native one would not be blockwise.
  at::Tensor ke, ve;
  int64_t expanded = kMathBackend;
  if (native <= kMathBackend) {
    ke = expand_kv_heads(k, q.size(2)).transpose(1, 2);
    ve = expand_kv_heads(v, q.size(2)).transpose(1, 2);
    expanded = sdpa_backend(qt, ke, ve, false);
  }
  switch (choose_gqa_path(native, expanded)) {
    case GqaPath::kNative: return sdpa(qt, kt, vt, true).transpose(1, 2);
    case GqaPath::kExpandKv: return sdpa(qt, ke, ve, false).transpose(1, 2);
    case GqaPath::kRefuse: break;
  }
  refuse_math(native);
}

at::Tensor sp_causal_attention(Comm& comm, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t P = comm.sp();
  if (P == 1) return causal_attention(q, k, v);
  const int64_t b = q.size(0), sl = q.size(1), h = q.size(2), d = q.size(3);
  at::Tensor kr = k, vr = v;
  if (k.size(2) < P) {  // fewer KV heads than ranks: rank p needs KV head p * h_kv / P
    kr = k.repeat_interleave(P / k.size(2), 2);
    vr = v.repeat_interleave(P / v.size(2), 2);
  }
  const int64_t hq = h / P, hkv = kr.size(2) / P;  // heads per rank after the exchange
  // One exchange for q, k and v: group each rank's heads together so the all-to-all's head split
  // hands rank p its q, k and v heads at once.
  const at::Tensor packed = at::cat({q.reshape({b, sl, P, hq, d}), kr.reshape({b, sl, P, hkv, d}),
                                     vr.reshape({b, sl, P, hkv, d})}, 3)
                                .reshape({b, sl, P * (hq + 2 * hkv), d});
  const at::Tensor all_tokens = seq_to_heads(comm, packed);  // [b, s, hq + 2 hkv, d]
  const at::Tensor out = causal_attention(all_tokens.narrow(2, 0, hq), all_tokens.narrow(2, hq, hkv),
                                          all_tokens.narrow(2, hq + hkv, hkv));
  return heads_to_seq(comm, out);  // [b, s/P, h, d]
}

}  // namespace spplan::engine
