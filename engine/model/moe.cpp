#include "engine/model/moe.hpp"

#include <limits>

#include <ATen/ATen.h>

#include "engine/io/hf_weights.hpp"
#include "engine/model/tiling.hpp"

namespace spplan::engine {
namespace {

struct Routing {
  at::Tensor logits;   // [T, E]
  at::Tensor weights;  // [T, k]: each token's experts' weights
  at::Tensor experts;  // [T, k] int64
};

// Qwen3MoeTopKRouter / MixtralTopKRouter: softmax in fp32 over every expert, then the top k,
// divided by their sum when norm_topk_prob; Qwen3 casts the weights to the logits' dtype, Mixtral
// keeps them fp32 (MixtralExperts multiplies in fp32).
Routing softmax_routing(const at::Tensor& flat, const MoeWeights& w, const ModelSpec& spec) {
  const at::Tensor logits = at::linear(flat, w.router);
  auto [weights, experts] = at::topk(at::softmax(logits, -1, at::kFloat), spec.experts_per_token, -1);
  if (spec.norm_topk_prob) weights = weights / weights.sum(-1, /*keepdim=*/true);
  if (!hf_moe_is_mixtral(spec)) weights = weights.to(logits.scalar_type());
  return {logits, weights, experts};
}

// Glm4MoeTopkRouter: logits in fp32 (input and weight cast), sigmoid scores; the experts picked by
// score plus the correction bias, only among the topk_group groups of experts whose two best
// biased scores sum highest; their unbiased scores gathered, divided by their sum (+ 1e-20) when
// norm_topk_prob, times routed_scaling_factor; fp32 weights.
Routing sigmoid_routing(const at::Tensor& flat, const MoeWeights& w, const ModelSpec& spec) {
  const at::Tensor logits = at::linear(flat.to(at::kFloat), w.router.to(at::kFloat));
  const at::Tensor scores = at::sigmoid(logits);
  at::Tensor experts;
  {
    at::NoGradGuard no_grad;  // which experts: no gradient flows through the choice
    at::Tensor choice = scores + w.router_bias.to(at::kFloat);
    const int64_t T = choice.size(0), groups = spec.router_groups, per_group = spec.num_experts / groups;
    if (spec.router_topk_groups < groups) {
      const at::Tensor group_scores = std::get<0>(choice.view({T, groups, per_group}).topk(2, -1)).sum(-1);
      const at::Tensor chosen = std::get<1>(at::topk(group_scores, spec.router_topk_groups, -1, true, false));
      const at::Tensor keep = at::zeros_like(group_scores).scatter_(1, chosen, 1.0).to(at::kBool);
      choice = choice.masked_fill(~keep.unsqueeze(-1).expand({T, groups, per_group}).reshape({T, -1}),
                                  -std::numeric_limits<float>::infinity());
    }
    experts = std::get<1>(at::topk(choice, spec.experts_per_token, -1, true, false));
  }
  at::Tensor weights = scores.gather(1, experts);
  if (spec.norm_topk_prob) weights = weights / (weights.sum(-1, /*keepdim=*/true) + 1e-20);
  return {logits, weights * spec.routed_scaling_factor, experts};
}

}  // namespace

MoeOutput moe_mlp(const at::Tensor& x, const MoeWeights& w, const ModelSpec& spec, bool fused_swiglu) {
  const int64_t h = x.size(-1), k = spec.experts_per_token;
  const at::Tensor flat = x.reshape({-1, h});  // [T, h]
  const auto [logits, weights, experts] =
      spec.router_sigmoid ? sigmoid_routing(flat, w, spec) : softmax_routing(flat, w, spec);
  const at::Tensor slot_weights = weights.reshape({-1, 1});  // [T k, 1]: slot t k + j is token t's j-th expert
  at::Tensor out = at::zeros_like(flat);
  // The (token, slot) pairs each expert serves, from one stable sort of the slots' expert ids: the
  // pairs transformers finds with its [T, k, E + 1] one-hot, without that int64 tensor.
  at::Tensor order, counts;
  {
    at::NoGradGuard no_grad;
    const at::Tensor ids = experts.reshape({-1});
    order = std::get<1>(at::sort(ids, /*stable=*/true, 0, false));
    counts = at::bincount(ids, {}, spec.num_experts).to(at::kCPU);
  }
  const auto* per_expert = counts.data_ptr<int64_t>();
  int64_t start = 0;
  for (int64_t e = 0; e < spec.num_experts; ++e) {
    const int64_t n = per_expert[e];
    if (n == 0) continue;
    const at::Tensor slots = order.narrow(0, start, n);
    start += n;
    const at::Tensor tokens = at::floor_divide(slots, k);
    const at::Tensor state = flat.index_select(0, tokens);  // transformers' hidden_states[token_idx]
    // The expert's weights are selected from the stacked parameters, as Qwen3MoeExperts does.
    const at::Tensor y = swiglu_mlp(state.unsqueeze(0), w.gate_up.select(0, e), w.down.select(0, e), {fused_swiglu, 1});
    out.index_add_(0, tokens, (y.squeeze(0) * slot_weights.index_select(0, slots)).to(out.scalar_type()));
  }
  // GLM-4.5's shared expert on every token, added to the routed experts' sum (Glm4MoeMoE.forward).
  if (!w.shared_gate_up.defined()) return {out.view_as(x), logits};
  return {out.view_as(x) + swiglu_mlp(x, w.shared_gate_up, w.shared_down, {fused_swiglu, 1}), logits};
}

at::Tensor load_balancing_share(const std::vector<at::Tensor>& router_logits, const ModelSpec& spec, Comm& comm) {
  const int64_t E = spec.num_experts;
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(comm.device());
  at::Tensor assigned = at::zeros({E}, f32), probs = at::zeros({E}, f32);
  double rows = 0;
  for (const at::Tensor& logits : router_logits) {
    const at::Tensor p = at::softmax(logits, -1);  // in the logits' dtype, as load_balancing_loss_func
    {
      at::NoGradGuard no_grad;
      const at::Tensor chosen = std::get<1>(at::topk(p, spec.experts_per_token, -1)).reshape({-1});
      assigned += at::bincount(chosen, {}, E).to(at::kFloat);
    }
    probs = probs + p.to(at::kFloat).sum(0);
    rows += static_cast<double>(logits.size(0));
  }
  // C and R over the ranks that hold this sequence (the same dp rank): gathered from the world.
  const at::Tensor mine = at::cat({assigned, at::full({1}, rows, f32)});
  at::Tensor group = at::zeros_like(mine);
  const std::vector<at::Tensor> all = comm.all_gather(mine);
  const int64_t group_size = comm.sp() * comm.cp();
  for (int64_t r = 0; r < static_cast<int64_t>(all.size()); ++r) {
    if (r / group_size == comm.dp_rank()) group += all[static_cast<size_t>(r)];
  }
  const at::Tensor total_rows = group.narrow(0, E, 1);
  const at::Tensor fraction = group.narrow(0, 0, E) / total_rows;
  return static_cast<double>(E) * (fraction * (probs / total_rows)).sum();
}

}  // namespace spplan::engine
