// Each count below lists the passes over a tensor of n elements (bytes read + written per
// element) as the PyTorch ops run them; reductions to one value per row are counted as a read
// only, and [n, 1] tensors (the RMS statistics) are left out as negligible.
#include "planner/costmodel/layer_kernels.hpp"

#include "planner/costmodel/dtype.hpp"

namespace spplan::costmodel {
namespace {

// Bytes per element of a pass, with a = the activation dtype's size and f = fp32's.
constexpr double f = kFp32Bytes;

// An upcast to fp32 or a downcast back: only when activations are narrower than fp32 (to(fp32)
// of an fp32 tensor returns it, no kernel).
KernelTraffic cast(double a) { return a < f ? KernelTraffic{a + f, 1} : KernelTraffic{}; }

// Hugging Face's eager RMSNorm (LlamaRMSNorm, Qwen3RMSNorm), forward: to(fp32); pow(2) (r f, w f);
// mean over the row (r f); x * rsqrt (r f, w f); to(dtype); weight * x (r a, w a).
KernelTraffic eager_rms_norm_fwd(double a) {
  KernelTraffic t{2 * f + f + 2 * f + 2 * a, 4};
  t += cast(a);
  t += cast(a);
  return t;
}

// Its autograd backward: weight-mul backward (grad * weight: r a, w a; grad * x and the sum over
// tokens for the weight's gradient: r 2a, w a, then r a); the downcast's backward; x * rsqrt's
// backward (grad * rsqrt: r f, w f; grad * x: r 2f, w f, summed per row: r f); mean's backward
// (an expand: w f); pow's backward (2 x grad: r 2f, w f); the two gradient branches added (r 2f,
// w f); the upcast's backward.
KernelTraffic eager_rms_norm_bwd(double a) {
  KernelTraffic t{2 * a + 3 * a + a + 2 * f + 3 * f + f + f + 3 * f + 3 * f, 9};
  t += cast(a);
  t += cast(a);
  return t;
}

// Liger's RMSNorm: one kernel reads x and writes y (forward); one reads x and dy and writes dx
// (backward; the weight's per-block partial sums are one value per row block).
KernelTraffic fused_rms_norm_fwd(double a) { return {2 * a, 1}; }
KernelTraffic fused_rms_norm_bwd(double a) { return {3 * a, 1}; }

// Eager rotate-half RoPE on one tensor: x * cos (r a, w a), rotate_half's negated half and concat
// (r a, w a; then r a, w a counted as one pass each half), * sin (r a, w a), the sum (r 2a, w a):
// about 10a over 5 kernels; its backward runs the mirror image. Liger's RoPE rotates q and k in
// place in one kernel per pass (r a, w a).
KernelTraffic eager_rope(double a) { return {10 * a, 5}; }
KernelTraffic fused_rope(double a) { return {2 * a, 0.5}; }  // one kernel for q and k together

// Eager SwiGLU on the intermediate width: silu(gate) (r a, w a) and * up (r 2a, w a); backward:
// grad * up and grad * silu (r 2a, w a each) and silu's backward (r 2a, w a). Liger: one kernel
// reads gate and up and writes the product; its backward reads dy, gate, up and writes dgate, dup.
KernelTraffic eager_swiglu_fwd(double a) { return {5 * a, 2}; }
KernelTraffic eager_swiglu_bwd(double a) { return {9 * a, 3}; }
KernelTraffic fused_swiglu_fwd(double a) { return {3 * a, 1}; }
KernelTraffic fused_swiglu_bwd(double a) { return {5 * a, 1}; }

// gpt-oss's clamped SwiGLU (transformers GptOssExperts._apply_gate), eager either way (Liger has no
// kernel for it): gate and up clamped (r a, w a each), alpha gate and its sigmoid (r a, w a each),
// gate times it (r 2a, w a), up + 1 (r a, w a), the product (r 2a, w a): 16a over 7 kernels. Its
// backward, the mirror: the product's two gradients, the up clamp's mask, the two gate factors',
// the sigmoid's, alpha's, their sum and the gate clamp's mask (r 2a, w a each but alpha's, r a, w
// a), then gate's and up's into the gate|up gradient (r 2a, w 2a): 30a over 10 kernels.
KernelTraffic clamped_swiglu_fwd(double a) { return {16 * a, 7}; }
KernelTraffic clamped_swiglu_bwd(double a) { return {30 * a, 10}; }

// `per_element` over `width` elements per token.
KernelTraffic over(const KernelTraffic& per_element, double width) {
  return {per_element.bytes_per_token * width, per_element.kernels};
}

struct Widths {
  double a, h, qk, i;  // activation bytes; hidden, q + k, SwiGLU widths per token (a mixture's k experts)
  bool qk_norm, fused;
  bool sandwich_norms;  // four RMSNorms a layer (Gemma 2, 3), not two
  bool fused_norms;  // the norms alone are one kernel a pass (LibTorch's fp32 rms_norm on a GPU)
  double experts = 0, k = 0;  // a mixture's experts and experts per token (0: dense)
  bool clamped_swiglu = false;  // gpt-oss's (ModelSpec::swiglu_limit)
  bool shared_expert = false;   // GLM-4.5's, a SwiGLU of its own beside the experts'
  bool fp32_router = false;     // GLM-4.5's router runs on an fp32 copy of its input
  double rotated = 1.0;         // the share of q and k RoPE rotates (ModelSpec::rotary_dim over head_dim)
  bool softmax_after_topk = false;  // gpt-oss's router softmaxes its top k logits only
};

// Designated: a field added out of order does not compile (positional, it would shift the rest).
Widths widths_of(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  const bool moe = m.is_moe();
  return {.a = act_bytes(p),
          .h = static_cast<double>(m.hidden_size),
          .qk = static_cast<double>(m.q_dim() + m.kv_dim()),
          .i = static_cast<double>(m.routed_width()),
          .qk_norm = m.qk_norm,
          .fused = p.stack.fused_layer_kernels || (p.stack.fused_layer_kernels_with_tiled_loss && p.knobs.tiled_loss),
          .sandwich_norms = m.sandwich_norms,
          .fused_norms = fp32_norms_fused(p),
          .experts = moe ? static_cast<double>(m.num_experts) : 0.0,
          .k = moe ? static_cast<double>(m.experts_per_token) : 0.0,
          .clamped_swiglu = m.swiglu_limit > 0,
          .shared_expert = moe && m.shared_expert_intermediate_size > 0,
          .fp32_router = moe && m.router_sigmoid,
          .rotated = static_cast<double>(m.rotary_dim()) / static_cast<double>(m.head_dim),
          .softmax_after_topk = moe && m.router_softmax_after_topk};
}

// A mixture's routing, a pass (transformers' expert loop, forward or its backward): the router's
// softmax and top-k over E (fp32 logits read and probabilities written), each expert's gather of
// its tokens' inputs (read and write k x h per token in all) and index_add of its weighted output
// into the block's (read and write again): two kernels an expert, three for the router.
// GLM-4.5's fp32 router first casts the layer's MLP input (r a, w f; its backward the reverse);
// gpt-oss's softmax reads and writes its k chosen logits, in their dtype, not E.
KernelTraffic moe_routing(const Widths& w) {
  if (w.experts == 0) return {};
  const double router = w.softmax_after_topk ? 2 * w.a * w.k : 2 * kFp32Bytes * w.experts;
  KernelTraffic t{4 * w.k * w.a * w.h + router, 2 * w.experts + 3};
  if (w.fp32_router) t += over(cast(w.a), w.h);
  return t;
}

// The residual adds (x + attention output, x + MLP output: r 2a, w a each) are unfused in both
// stacks; in backward the residual stream's gradient is added to each branch's (r 2a, w a).
KernelTraffic residual_adds(const Widths& w) { return {2 * 3 * w.a * w.h, 2}; }

// One pass's per-element traffic of each op.
struct OpTraffic {
  KernelTraffic norm, rope, swiglu;
};

// One pass over a layer: the input and post-attention norms over h (with sandwich norms also the
// attention's and the MLP's outputs: Gemma3DecoderLayer), Qwen3's and Gemma 3's per-head q and k norms
// (the same op over q + k, two tensors), RoPE on q and k (two tensors), SwiGLU over i, and the
// residual adds.
KernelTraffic layer_pass(const Widths& w, const OpTraffic& op) {
  KernelTraffic t = over(op.norm, w.h);
  t += over(op.norm, w.h);
  if (w.sandwich_norms) {
    t += over(op.norm, w.h);
    t += over(op.norm, w.h);
  }
  if (w.qk_norm) {
    t += over(op.norm, w.qk);
    t.kernels += op.norm.kernels;
  }
  t += over(op.rope, w.qk * w.rotated);  // a partial RoPE slices and concatenates too: left out
  t.kernels += op.rope.kernels;
  t += over(op.swiglu, w.i);
  if (w.experts > 0) t.kernels += (w.experts - 1) * op.swiglu.kernels;  // the expert loop: each its own
  if (w.shared_expert) t.kernels += op.swiglu.kernels;
  t += residual_adds(w);
  t += moe_routing(w);
  return t;
}

}  // namespace

KernelTraffic layer_elementwise_fwd(const PlanSpec& p) {
  const Widths w = widths_of(p);
  const KernelTraffic swiglu = w.clamped_swiglu ? clamped_swiglu_fwd(w.a) : w.fused ? fused_swiglu_fwd(w.a) : eager_swiglu_fwd(w.a);
  if (w.fused) return layer_pass(w, {fused_rms_norm_fwd(w.a), fused_rope(w.a), swiglu});
  const KernelTraffic norm = w.fused_norms ? fused_rms_norm_fwd(w.a) : eager_rms_norm_fwd(w.a);
  return layer_pass(w, {norm, eager_rope(w.a), swiglu});
}

KernelTraffic layer_elementwise_bwd(const PlanSpec& p) {
  const Widths w = widths_of(p);
  const KernelTraffic swiglu = w.clamped_swiglu ? clamped_swiglu_bwd(w.a) : w.fused ? fused_swiglu_bwd(w.a) : eager_swiglu_bwd(w.a);
  if (w.fused) return layer_pass(w, {fused_rms_norm_bwd(w.a), fused_rope(w.a), swiglu});
  const KernelTraffic norm = w.fused_norms ? fused_rms_norm_bwd(w.a) : eager_rms_norm_bwd(w.a);
  return layer_pass(w, {norm, eager_rope(w.a), swiglu});
}

// cross_entropy(logits.float(), labels): the upcast (r a, w f); log_softmax over the vocabulary
// (PyTorch's softmax kernel reads each row for its max, again for the sum of exponentials and a
// third time to write the result: r 3f, w f); the nll gather reads one value per token. A loss
// without the upcast (dtype.hpp cross_entropy_bytes) runs the same passes on the logits' dtype.
KernelTraffic unfused_loss_fwd(const PlanSpec& p) {
  const double a = act_bytes(p), v = static_cast<double>(p.model.vocab_size), e = cross_entropy_bytes(p);
  KernelTraffic t = loss_upcast_bytes(p) > 0 ? over(cast(a), v) : KernelTraffic{};
  t += {4 * e * v, 1};
  return t;
}

// Backward: nll's gradient (a zero-filled [s, V] tensor with one entry per token set: w e);
// log_softmax's backward (the row sum of the incoming gradient, r e; then r 2e, w e); the
// upcast's backward (r f, w a) when there was one. e: the cross-entropy's element bytes (fp32
// after the upcast).
KernelTraffic unfused_loss_bwd(const PlanSpec& p) {
  const double a = act_bytes(p), v = static_cast<double>(p.model.vocab_size), e = cross_entropy_bytes(p);
  KernelTraffic t{(e + e + 3 * e) * v, 2};
  if (loss_upcast_bytes(p) > 0) t += over(cast(a), v);
  return t;
}

}  // namespace spplan::costmodel
