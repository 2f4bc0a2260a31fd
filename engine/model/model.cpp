#include "engine/model/model.hpp"

#include <functional>
#include <optional>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/memory_meter.hpp"
#include "engine/device/precision.hpp"
#include "engine/io/data.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/checkpointed_layer.hpp"
#include "engine/model/fused_kernels.hpp"
#include "engine/model/fused_reference.hpp"
#include "engine/model/parameters.hpp"
#include "engine/model/rope.hpp"
#include "engine/model/tiling.hpp"
#include "engine/parallel/offload.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Identity whose backward switches the memory tag: gradients flowing past it into the layers are
// activations, those above it (the head) are logits.
struct TagOnBackward : torch::autograd::Function<TagOnBackward> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x) { return x.view_as(x); }
  static variable_list backward(AutogradContext*, variable_list grad) {
    set_memory_category(MemCategory::kActivations);
    return grad;
  }
};

// A zero-filled device buffer tagged `category`.
at::Tensor shard_buffer(int64_t numel, MemCategory category, const at::TensorOptions& options) {
  MemoryScope tag(category);
  return at::zeros({numel}, options);
}

}  // namespace

std::vector<at::Tensor> LayerParams::all() const {
  std::vector<at::Tensor> out{attn_norm, wqkv, wo, mlp_norm};
  if (bqkv.defined()) out.push_back(bqkv);
  if (q_norm.defined()) out.insert(out.end(), {q_norm, k_norm});
  if (mixture) {
    out.insert(out.end(), {experts.router, experts.gate_up, experts.down});
    for (const at::Tensor& t : {experts.router_bias, experts.shared_gate_up, experts.shared_down}) {
      if (t.defined()) out.push_back(t);
    }
  } else {
    out.insert(out.end(), {w_gate_up, w_down});
  }
  return out;
}

Model::Model(const ModelSpec& spec, uint64_t seed, Comm& comm, const Knobs& knobs, c10::Device device, int64_t seq_len)
    : spec_(spec), comm_(comm), knobs_(knobs), rope_seq_len_(seq_len) {
  const auto decls = param_units(spec);
  const int64_t stage = knobs.zero_stage;
  // ZeRO 0 keeps the unpadded layout; stages 1-3 partition every unit over the whole world.
  const bool partitioned = stage >= 1;
  layout_ = ZeroLayout(shapes_of(decls), partitioned ? comm.world() : 1, partitioned ? comm.rank() : 0);
  const at::ScalarType dtype = model_dtype(knobs);
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  at::Tensor full;
  {
    // At stage 3 a temporary (the same on every rank, so each keeps its chunks): it dies before
    // training starts, and the worker resets the peak after building the model.
    MemoryScope tag(MemCategory::kParams);
    full = at::empty({layout_.full_numel()}, options);
  }
  init_params(full, layout_, decls, seed);
  if (stage < 3) {
    params_flat_ = full;
  } else {
    const int64_t n = layout_.shard_numel();
    params_flat_ = knobs.offload_params != OffloadDevice::kNone ? host_zeros(n, dtype, MemCategory::kParams, device)
                                                                 : shard_buffer(n, MemCategory::kParams, options);
    for (const ZeroUnit& u : layout_.units()) layout_.shard_part(params_flat_, u).copy_(layout_.chunk_of(full, u));
  }
  full.reset();
  // Autograd accumulates into the grads in place, so they are allocated once. With the optimizer
  // offloaded, DeepSpeed keeps the stage 2, 3 gradient partition on the host (MEMORY-FACTS 3.1);
  // on a GPU the leaf and its grad must share a device, so there only with the parameters.
  const int64_t grad_numel = stage < 2 ? layout_.full_numel() : layout_.shard_numel();
  grads_on_host_ = stage >= 2 && knobs.offload_optimizer != OffloadDevice::kNone &&
                  (device.is_cpu() || knobs.offload_params != OffloadDevice::kNone);
  grads_flat_ = grads_on_host_ ? host_zeros(grad_numel, dtype, MemCategory::kGrads, device)
                               : shard_buffer(grad_numel, MemCategory::kGrads, options);
  layers_.resize(static_cast<size_t>(spec.num_hidden_layers));
  for (size_t l = 0; l < layers_.size(); ++l) {
    layers_[l].mixture = spec.is_moe() && static_cast<int64_t>(l) >= spec.first_dense_layers;
  }
  const std::vector<ZeroUnit>& units = layout_.units();
  if (stage < 2) {
    // Each parameter: a leaf view of the flat buffer whose .grad is the matching view of the grads.
    for (size_t u = 0; u < units.size(); ++u) {
      std::vector<at::Tensor> params = ZeroLayout::carve(layout_.unit_of(params_flat_, units[u]), units[u]);
      const std::vector<at::Tensor> grads = ZeroLayout::carve(layout_.unit_of(grads_flat_, units[u]), units[u]);
      for (size_t i = 0; i < params.size(); ++i) {
        params[i] = params[i].detach().requires_grad_(true);
        params[i].mutable_grad() = grads[i];
      }
      bind_unit(u, params);
    }
    return;
  }
  // Stage 2, 3: the leaves are this rank's chunks, whose .grad is its part of the shard grads. At
  // stage 2 a chunk is a view of the full params (AdamW updates it in place, the all-gather after
  // the step spreads it); at stage 3 it is the shard itself.
  const at::ScalarType wire = reduce_dtype(knobs, comm.sp());
  unit_contexts_.reserve(units.size());  // zero_unit_params keeps pointers to them
  for (const ZeroUnit& u : units) {
    at::Tensor chunk = stage == 2 ? layout_.chunk_of(params_flat_, u) : layout_.shard_part(params_flat_, u);
    chunk = chunk.detach().requires_grad_(true);
    chunk.mutable_grad() = layout_.shard_part(grads_flat_, u);
    shard_leaves_.push_back(chunk);
    const at::Tensor resident = stage == 2 ? layout_.unit_of(params_flat_, u) : at::Tensor();
    const bool shard_on_host = stage == 3 && knobs.offload_params != OffloadDevice::kNone;
    unit_contexts_.push_back({&comm, &u, resident, knobs.reduce_bucket_elems, wire, device, shard_on_host});
  }
}

// Points the named parameters of `unit` at `params` (declaration order); an empty list unbinds.
void Model::bind_unit(size_t unit, const std::vector<at::Tensor>& params) {
  size_t next = 0;
  auto take = [&] { return next < params.size() ? params[next++] : at::Tensor(); };
  const bool tied = spec_.tie_word_embeddings;
  if (unit == 0) {
    embed_ = take();
    if (tied) lm_head_ = embed_;
  } else if (unit <= layers_.size()) {
    LayerParams& L = layers_[unit - 1];
    L.attn_norm = take();
    L.wqkv = take();
    if (spec_.attention_bias) L.bqkv = take();
    if (spec_.qk_norm) {
      L.q_norm = take();
      L.k_norm = take();
    }
    L.wo = take();
    L.mlp_norm = take();
    if (L.mixture) {
      L.experts.router = take();
      if (spec_.router_sigmoid) L.experts.router_bias = take();
      L.experts.gate_up = take();
      L.experts.down = take();
      if (spec_.shared_expert_intermediate_size > 0) {
        L.experts.shared_gate_up = take();
        L.experts.shared_down = take();
      }
    } else {
      L.w_gate_up = take();
      L.w_down = take();
    }
  } else {
    final_norm_ = take();
    if (!tied) lm_head_ = take();
  }
}

// Stage 2, 3: binds a unit's parameters from zero_unit_params while it lives (the graph keeps what
// it saved for the backward; the rest of a gathered unit is freed when this ends). Stages 0, 1:
// nothing to do, the parameters stay bound.
class Model::UnitUse {
 public:
  UnitUse(Model& m, size_t unit) : m_(m), unit_(unit) {
    if (!m_.shard_leaves_.empty()) m_.bind_unit(unit_, zero_unit_params(&m_.unit_contexts_[unit_], m_.shard_leaves_[unit_]));
  }
  ~UnitUse() {
    if (!m_.shard_leaves_.empty()) m_.bind_unit(unit_, {});
  }
  UnitUse(const UnitUse&) = delete;
  UnitUse& operator=(const UnitUse&) = delete;

 private:
  Model& m_;
  size_t unit_;
};

std::vector<at::Tensor> Model::owned_params() const {
  std::vector<at::Tensor> out;
  for (const ZeroUnit& u : layout_.units()) {
    out.push_back(knobs_.zero_stage >= 3 ? layout_.shard_part(params_flat_, u) : layout_.chunk_of(params_flat_, u));
  }
  return out;
}

std::vector<at::Tensor> Model::owned_grads() const {
  std::vector<at::Tensor> out;
  for (const ZeroUnit& u : layout_.units()) {
    out.push_back(knobs_.zero_stage >= 2 ? layout_.shard_part(grads_flat_, u) : layout_.chunk_of(grads_flat_, u));
  }
  return out;
}

Model::~Model() = default;

std::pair<at::Tensor, at::Tensor> Model::rotated_qk(const LayerParams& L, const at::Tensor& normed,
                                                    const at::Tensor& cos, const at::Tensor& sin) const {
  const int64_t b = normed.size(0), n = normed.size(1), d = spec_.head_dim;
  const int64_t nh = spec_.num_attention_heads, nkv = spec_.num_key_value_heads, qk_rows = (nh + nkv) * d;
  const double eps = spec_.rms_norm_eps;
  // One GEMM for q|k; the norms and RoPE make new tensors of both, so the GEMM's output is freed
  // when this returns, as HF frees q_proj's and k_proj's outputs once rotated (held through
  // attention it cost (nh + nkv) d elements a token at the Ulysses exchange, as measured).
  const at::Tensor qk = at::linear(normed, L.wqkv.narrow(0, 0, qk_rows),
                                   L.bqkv.defined() ? L.bqkv.narrow(0, 0, qk_rows) : at::Tensor());  // [b, n, (nh + nkv) d]
  at::Tensor q = qk.narrow(2, 0, nh * d).view({b, n, nh, d});
  at::Tensor k = qk.narrow(2, nh * d, nkv * d).view({b, n, nkv, d});
  // RoPE on the first `rotary` dimensions of each head, the rest passed through (GLM-4.5's
  // partial_rotary_factor: transformers' apply_rotary_pos_emb slices, rotates and concatenates).
  const int64_t rotary = cos.size(-1) * 2;
  if (rotary < d) {
    if (spec_.qk_norm) {
      q = rms_normalize(q, L.q_norm, eps, false);
      k = rms_normalize(k, L.k_norm, eps, false);
    }
    const auto rotate = [&](const at::Tensor& x) {
      return at::cat({reference::apply_rope(x.narrow(3, 0, rotary), cos, sin), x.narrow(3, rotary, d - rotary)}, 3);
    };
    return {rotate(q), rotate(k)};
  }
  if (knobs_.tiled_loss && spec_.qk_norm && cos.size(0) == 1) {  // per-position tables; a batch of packed rows runs unfused
    const at::Tensor cos_rows = cos.view({n, d / 2}), sin_rows = sin.view({n, d / 2});
    return {fused_qk_norm_rope(q, L.q_norm, cos_rows, sin_rows, eps), fused_qk_norm_rope(k, L.k_norm, cos_rows, sin_rows, eps)};
  }
  if (spec_.qk_norm) {
    q = rms_normalize(q, L.q_norm, eps, false);
    k = rms_normalize(k, L.k_norm, eps, false);
  }
  return {reference::apply_rope(q, cos, sin), reference::apply_rope(k, cos, sin)};
}

at::Tensor Model::attention(const LayerParams& L, const at::Tensor& normed, const at::Tensor& cos,
                            const at::Tensor& sin, const DocStarts& docs) const {
  const int64_t b = normed.size(0), n = normed.size(1), d = spec_.head_dim;
  const int64_t nh = spec_.num_attention_heads, nkv = spec_.num_key_value_heads, qk_rows = (nh + nkv) * d;
  const auto [q, k] = rotated_qk(L, normed, cos, sin);
  // Two GEMMs over the stacked weight, q|k and v, as Hugging Face's separate projections hold
  // them: attention saves v for its backward, and were v a view of one [b, n, (nh + 2 nkv) d]
  // output, that whole output (its q and k parts already rotated into new tensors) would stay
  // alive with it, (nh + nkv) d elements a token more than HF keeps (measured at the peak).
  const at::Tensor v = at::linear(normed, L.wqkv.narrow(0, qk_rows, nkv * d),
                                  L.bqkv.defined() ? L.bqkv.narrow(0, qk_rows, nkv * d) : at::Tensor())
                           .view({b, n, nkv, d});
  // A sliding window (Mistral's) on every layer: the plan rules refuse a model that windows some
  // layers only (engine.toml) and a ring over a window.
  return sp_causal_attention(comm_, q, k, v, docs, spec_.sliding_window);
}

at::Tensor Model::mlp(const LayerParams& L, const at::Tensor& normed, std::vector<at::Tensor>* router_logits) const {
  const MlpOptions o = mlp_options(knobs_, normed.size(1), spec_.hidden_size);
  if (!L.mixture) return swiglu_mlp(normed, L.w_gate_up, L.w_down, o);
  MoeOutput moe = moe_mlp(normed, L.experts, spec_, o.fused_swiglu);
  if (keeps_router_logits()) router_logits->push_back(std::move(moe.router_logits));
  return moe.out;
}

std::vector<at::Tensor> Model::layer(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                                     const DocStarts& docs) const {
  const LayerParams& L = layers_[index];
  const int64_t b = x.size(0), n = x.size(1), d = spec_.head_dim;
  const int64_t nh = spec_.num_attention_heads;
  const double eps = spec_.rms_norm_eps;
  // --tiled-loss brings Liger's fused RMSNorm, q/k norm + RoPE and SwiGLU with it (fused_kernels.hpp),
  // as the costmodel assumes; here the residual add before the MLP's norm is fused with it too.
  const bool fused = knobs_.tiled_loss;
  const at::Tensor attn = attention(L, rms_normalize(x, L.attn_norm, eps, fused), cos, sin, docs);  // [b, n, nh, d]
  // The projection is a temporary: it must not outlive the residual add (it would stay alive,
  // [tokens, h], through the MLP).
  std::vector<at::Tensor> out(1);
  if (fused) {
    const auto [x1, normed] = fused_add_rms_norm(x, at::linear(attn.reshape({b, n, nh * d}), L.wo), L.mlp_norm, eps);
    out[0] = x1 + mlp(L, normed, &out);
    return out;
  }
  const at::Tensor x1 = x + at::linear(attn.reshape({b, n, nh * d}), L.wo);
  out[0] = x1 + mlp(L, rms_normalize(x1, L.mlp_norm, eps, false), &out);
  return out;
}

at::Tensor Model::head_loss(const at::Tensor& x, const at::Tensor& labels) const {
  if (knobs_.tiled_loss) {  // chunked fused linear cross-entropy: no [tokens, V] logits (tiling.hpp)
    const at::Tensor normed = fused_rms_norm(x, final_norm_, spec_.rms_norm_eps);
    return fused_linear_cross_entropy(normed.reshape({-1, spec_.hidden_size}), lm_head_, labels.reshape({-1}));
  }
  const at::Tensor logits = at::linear(rms_normalize(x, final_norm_, spec_.rms_norm_eps, false), lm_head_);
  // HF's loss upcasts the logits to fp32 first (a no-op in fp32 training).
  return at::cross_entropy_loss(logits.view({-1, spec_.vocab_size}).to(at::kFloat), labels.reshape({-1}), {},
                                at::Reduction::Sum, kIgnoreLabel);
}

// act_ckpt full or offload. Stages 2, 3: the checkpoint's only parameter input is the layer's
// shard leaf and the layer function gathers the parameters itself, in the forward and again in the recompute, so
// at stage 3 a layer's parameters are gathered only while it runs.
std::vector<at::Tensor> Model::checkpointed_layer(size_t l, const at::Tensor& x, const at::Tensor& cos,
                                                  const at::Tensor& sin, const DocStarts& docs) {
  layer_fns_[l] = [this, l, cos, sin, docs](const at::Tensor& in) {
    UnitUse use(*this, l + 1);
    return layer(l, in, cos, sin, docs);
  };
  const std::vector<at::Tensor> params = shard_leaves_.empty() ? layers_[l].all() : std::vector<at::Tensor>{shard_leaves_[l + 1]};
  const bool offload = knobs_.act_ckpt == ActCkpt::kOffload;
  return checkpoint_layer(&layer_fns_[l], offload, x, params);
}

at::Tensor Model::forward_layers(const at::Tensor& inputs, int64_t first_position, const at::Tensor& positions,
                                 const DocStarts& doc_starts) {
  MemoryScope tag(MemCategory::kActivations);
  // HF computes the tables in fp32 and casts them to the activations' dtype.
  // On the compute device: offloaded parameters live on the host.
  // The frequencies too are made per forward, as activations (d/2 floats; nothing outlives the step).
  const RopeFrequencies rope = rope_frequencies(spec_, rope_seq_len_, comm_.device());
  auto [cos, sin] = positions.defined() ? rope_tables_at(rope, positions) : rope_tables(rope, first_position, inputs.size(1));
  cos = cos.to(model_dtype(knobs_));
  sin = sin.to(model_dtype(knobs_));
  at::Tensor x;
  {
    UnitUse use(*this, 0);  // the embedding's backward needs only the indices: freed at once
    x = at::embedding(embed_, inputs);  // [b, n, h]
  }
  layer_fns_.assign(layers_.size(), LayerFn());
  router_logits_.clear();
  for (size_t l = 0; l < layers_.size(); ++l) {
    std::vector<at::Tensor> out;
    if (knobs_.act_ckpt != ActCkpt::kNone) {
      out = checkpointed_layer(l, x, cos, sin, doc_starts);
    } else {
      UnitUse use(*this, l + 1);
      out = layer(l, x, cos, sin, doc_starts);
    }
    x = out[0];
    if (out.size() > 1) router_logits_.push_back(out[1]);
  }
  return TagOnBackward::apply(x);
}

at::Tensor Model::load_balancing_share() {
  if (!keeps_router_logits()) return {};
  MemoryScope tag(MemCategory::kActivations);  // as the costmodel counts the router logits (memory_phases.cpp)
  const at::Tensor share = engine::load_balancing_share(router_logits_, spec_, comm_);
  router_logits_.clear();  // the graph keeps what the loss's backward needs
  return share;
}

at::Tensor Model::loss_sum(const at::Tensor& hidden, const at::Tensor& labels) {
  MemoryScope logits_tag(MemCategory::kLogits);
  // The head's parameters stay gathered until its backward (its graph saves them), which runs next.
  UnitUse head(*this, layers_.size() + 1);
  std::optional<UnitUse> tied_head;
  if (spec_.tie_word_embeddings) tied_head.emplace(*this, 0);
  return head_loss(hidden, labels);
}

}  // namespace spplan::engine
