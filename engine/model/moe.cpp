#include "engine/model/moe.hpp"

#include <ATen/ATen.h>

#include "engine/io/hf_weights.hpp"
#include "engine/model/tiling.hpp"

namespace spplan::engine {

MoeOutput moe_mlp(const at::Tensor& x, const MoeWeights& w, const ModelSpec& spec, bool fused_swiglu) {
  const int64_t h = x.size(-1), k = spec.experts_per_token;
  const at::Tensor flat = x.reshape({-1, h});  // [T, h]
  const at::Tensor logits = at::linear(flat, w.router);  // [T, E]
  // Qwen3MoeTopKRouter / MixtralTopKRouter: softmax in fp32 over every expert, then the top k.
  auto [weights, experts] = at::topk(at::softmax(logits, -1, at::kFloat), k, -1);
  if (spec.norm_topk_prob) weights = weights / weights.sum(-1, /*keepdim=*/true);
  // Qwen3MoeTopKRouter casts the weights to the logits' dtype; MixtralExperts multiplies in fp32.
  if (!hf_moe_is_mixtral(spec)) weights = weights.to(logits.scalar_type());
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
  return {out.view_as(x), logits};
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
