#include "engine/model.hpp"

#include <functional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/attention.hpp"
#include "engine/data.hpp"
#include "engine/memory_meter.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using LayerFn = std::function<at::Tensor(const at::Tensor&)>;

// Activation checkpointing (BUILD-NOTES section 4): forward keeps only the layer input; backward
// recomputes the layer (all-to-alls included, in the same order on every rank) and differentiates
// it. Parameters come in as a TensorList so autograd routes their gradients (gotcha G4).
struct CheckpointedLayer : torch::autograd::Function<CheckpointedLayer> {
  static variable_list forward(AutogradContext* ctx, const LayerFn* fn, const at::Tensor& x, at::TensorList params) {
    ctx->saved_data["fn"] = reinterpret_cast<int64_t>(fn);
    std::vector<at::Tensor> keep{x};
    keep.insert(keep.end(), params.begin(), params.end());
    ctx->save_for_backward(keep);
    at::NoGradGuard no_grad;
    return {(*fn)(x)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto* fn = reinterpret_cast<const LayerFn*>(ctx->saved_data["fn"].toInt());
    const variable_list saved = ctx->get_saved_variables();
    variable_list inputs{saved[0].detach().requires_grad_(true)};
    inputs.insert(inputs.end(), saved.begin() + 1, saved.end());
    at::Tensor y;
    {
      at::AutoGradMode enable(true);
      y = (*fn)(inputs[0]);
    }
    variable_list g = torch::autograd::grad({y}, inputs, {grad[0]}, false, false, /*allow_unused=*/true);
    g.insert(g.begin(), at::Tensor());  // no gradient for `fn`
    return g;
  }
};

// Identity whose backward switches the memory tag: gradients flowing past it into the layers are
// activations, those above it (the head) are logits.
struct TagOnBackward : torch::autograd::Function<TagOnBackward> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x) { return x.view_as(x); }
  static variable_list backward(AutogradContext*, variable_list grad) {
    set_memory_category(MemCategory::kActivations);
    return grad;
  }
};

// RoPE tables for positions [first, first + n): cos, sin of [1, n, 1, d/2] (HF Llama's float32 recipe).
std::pair<at::Tensor, at::Tensor> rope_tables(int64_t first, int64_t n, int64_t d, double theta, c10::Device device) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor inv_freq = 1.0 / at::pow(theta, at::arange(0, d, 2, f32) / static_cast<double>(d));
  const at::Tensor angles = at::outer(at::arange(first, first + n, f32), inv_freq);  // [n, d/2]
  return {angles.cos().view({1, n, 1, d / 2}), angles.sin().view({1, n, 1, d / 2})};
}

// Rotate-half RoPE on x [b, n, heads, d].
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(3) / 2;
  const at::Tensor x1 = x.narrow(3, 0, half), x2 = x.narrow(3, half, half);
  return at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, 3);
}

// Carves parameters out of the flat buffer in declaration order.
struct Carver {
  at::Tensor flat;
  int64_t offset = 0;
  at::Tensor take(at::IntArrayRef shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    at::Tensor t = flat.narrow(0, offset, n).view(shape);
    offset += n;
    return t;
  }
};

}  // namespace

std::vector<at::Tensor> LayerParams::all() const {
  std::vector<at::Tensor> out{attn_norm, wqkv, wo, mlp_norm, w_gate_up, w_down};
  if (q_norm.defined()) out.insert(out.end(), {q_norm, k_norm});
  return out;
}

Model::Model(const ModelSpec& spec, uint64_t seed, Comm& comm, const Knobs& knobs, c10::Device device)
    : spec_(spec), comm_(comm), knobs_(knobs) {
  const int64_t h = spec.hidden_size, d = spec.head_dim, i = spec.intermediate_size, V = spec.vocab_size;
  const int64_t qkv = (spec.num_attention_heads + 2 * spec.num_key_value_heads) * d;
  const int64_t per_layer = 2 * h + qkv * h + (spec.qk_norm ? 2 * d : 0) + h * spec.q_dim() + 3 * i * h;
  const int64_t total = V * h + spec.num_hidden_layers * per_layer + h + (spec.tie_word_embeddings ? 0 : V * h);
  {
    MemoryScope tag(MemCategory::kParams);
    params_flat_ = at::empty({total}, at::TensorOptions().dtype(at::kFloat).device(device));
  }
  {
    MemoryScope tag(MemCategory::kGrads);  // allocated once; autograd accumulates into it in place
    grads_flat_ = at::zeros({total}, at::TensorOptions().dtype(at::kFloat).device(device));
  }
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  Carver p{params_flat_}, g{grads_flat_};
  // Each parameter: a leaf view of the flat buffer whose .grad is the matching view of the grads.
  // Values come from the CPU generator on every device, so a GPU run starts from the same weights.
  auto take = [&](at::IntArrayRef shape, bool is_norm) {
    at::Tensor t = p.take(shape);
    at::Tensor init = device.is_cpu() ? t : at::empty(shape, at::kFloat);
    is_norm ? init.fill_(1.0) : init.normal_(0.0, 0.02, gen);
    if (!device.is_cpu()) t.copy_(init);
    t = t.detach().requires_grad_(true);
    t.mutable_grad() = g.take(shape);
    return t;
  };
  embed_ = take({V, h}, false);
  for (int64_t l = 0; l < spec.num_hidden_layers; ++l) {
    LayerParams L;
    L.attn_norm = take({h}, true);
    L.wqkv = take({qkv, h}, false);
    if (spec.qk_norm) {
      L.q_norm = take({d}, true);
      L.k_norm = take({d}, true);
    }
    L.wo = take({h, spec.q_dim()}, false);
    L.mlp_norm = take({h}, true);
    L.w_gate_up = take({2 * i, h}, false);
    L.w_down = take({h, i}, false);
    layers_.push_back(L);
  }
  final_norm_ = take({h}, true);
  lm_head_ = spec.tie_word_embeddings ? embed_ : take({V, h}, false);
  TORCH_CHECK(p.offset == total, "model: parameter layout does not add up");
}

Model::~Model() = default;

at::Tensor Model::layer(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) const {
  const LayerParams& L = layers_[index];
  const int64_t b = x.size(0), n = x.size(1), h = spec_.hidden_size, d = spec_.head_dim;
  const int64_t nh = spec_.num_attention_heads, nkv = spec_.num_key_value_heads, ffn = spec_.intermediate_size;
  const double eps = spec_.rms_norm_eps;
  const at::Tensor qkv = at::linear(at::rms_norm(x, {h}, L.attn_norm, eps), L.wqkv);  // [b, n, (nh + 2 nkv) d]
  at::Tensor q = qkv.narrow(2, 0, nh * d).view({b, n, nh, d});
  at::Tensor k = qkv.narrow(2, nh * d, nkv * d).view({b, n, nkv, d});
  const at::Tensor v = qkv.narrow(2, (nh + nkv) * d, nkv * d).view({b, n, nkv, d});
  if (spec_.qk_norm) {
    q = at::rms_norm(q, {d}, L.q_norm, eps);
    k = at::rms_norm(k, {d}, L.k_norm, eps);
  }
  q = apply_rope(q, cos, sin);
  k = apply_rope(k, cos, sin);
  const at::Tensor attn = sp_causal_attention(comm_, q, k, v);                         // [b, n, nh, d]
  const at::Tensor x1 = x + at::linear(attn.reshape({b, n, nh * d}), L.wo);
  const at::Tensor gate_up = at::linear(at::rms_norm(x1, {h}, L.mlp_norm, eps), L.w_gate_up);  // [b, n, 2 ffn]
  return x1 + at::linear(at::silu(gate_up.narrow(2, 0, ffn)) * gate_up.narrow(2, ffn, ffn), L.w_down);
}

at::Tensor Model::head_loss(const at::Tensor& x, const at::Tensor& labels) const {
  const at::Tensor logits = at::linear(at::rms_norm(x, {spec_.hidden_size}, final_norm_, spec_.rms_norm_eps), lm_head_);
  return at::cross_entropy_loss(logits.view({-1, spec_.vocab_size}), labels.reshape({-1}), {}, at::Reduction::Sum,
                                kIgnoreLabel);
}

at::Tensor Model::loss_sum(const at::Tensor& inputs, const at::Tensor& labels, int64_t first_position) {
  MemoryScope tag(MemCategory::kActivations);
  const auto [cos, sin] = rope_tables(first_position, inputs.size(1), spec_.head_dim, spec_.rope_theta,
                                        params_flat_.device());
  at::Tensor x = at::embedding(embed_, inputs);  // [b, n, h]
  layer_fns_.assign(layers_.size(), LayerFn());
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (knobs_.act_ckpt == ActCkpt::kFull) {
      layer_fns_[l] = [this, l, cos = cos, sin = sin](const at::Tensor& in) { return layer(l, in, cos, sin); };
      const std::vector<at::Tensor> params = layers_[l].all();
      x = CheckpointedLayer::apply(&layer_fns_[l], x, at::TensorList(params))[0];
    } else {
      x = layer(l, x, cos, sin);
    }
  }
  x = TagOnBackward::apply(x);
  MemoryScope logits_tag(MemCategory::kLogits);
  return head_loss(x, labels);
}

}  // namespace spplan::engine
