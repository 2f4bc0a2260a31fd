// StepGraphBuilder: the backward, the gradient reductions, the optimizer phase and build().
#include <algorithm>
#include <numeric>

#include "simulator/step_graph_builder.hpp"

namespace spplan::sim::detail {

bool StepGraphBuilder::checkpoint_stays_on_device(int layer) const {
  if (!t_.checkpoints_offloaded) return true;
  return !t_.checkpoints_only_while_running && layer >= c_.layers - t_.checkpoints_kept_on_device;
}

// Brings layer `layer`'s checkpoint back, issued when the backward unit before it begins (one
// layer ahead of its recompute). Checkpoints that never left the device need no memory here.
void StepGraphBuilder::emit_ckpt_h2d(int micro, int layer) {
  if (layer < 0) return;
  const OpId copy = add_optional(micro_prefix(micro) + "ckpt_h2d.L" + std::to_string(layer), Resource::kH2D,
                                 OpCategory::kOffload, c_.ckpt_h2d_s);
  g_.add_dep(ckpt_d2h_[layer], copy);
  g_.add_dep(prev_compute_, copy);
  ckpt_h2d_[layer] = copy;
  if (!checkpoint_stays_on_device(layer)) alloc_at_start(copy, MemCategory::kActivations, t_.layer(layer).stored);
}

// Recompute (when checkpointed) then backward. The backward holds its transients, the layer's
// full gradients and a reduce copy of the bucket; when it ends the layer's activations go and the
// reduction starts on the comm stream, overlapping the next layers' backward.
void StepGraphBuilder::emit_backward_layer(int micro, int layer) {
  const std::string mp = micro_prefix(micro), li = std::to_string(layer);
  const MemoryTerms::LayerBytes own = t_.layer(layer);
  // Only a checkpoint that left the device is waited for; the costmodel still prices a copy for
  // the kept ones, which then runs on the copy engine without holding anything up.
  const bool lost_checkpoint = !checkpoint_stays_on_device(layer);
  const bool ahead = t_.checkpoints_reload_ahead;
  if (!ahead) emit_ckpt_h2d(micro, layer);  // its own input, copied back as its backward begins
  const OpId brought_back = lost_checkpoint ? ckpt_h2d_[layer] : kNoOp;
  if (has_recompute_) {
    begin_use();
    if (ahead) emit_ckpt_h2d(micro, layer - 1);
    const PassOps rec = emit_pass(c_.layer_pass(costmodel::StepCosts::Pass::kRecompute, layer), false, mp + "rec.L" + li + ".", layer);
    attach_first(rec.first);
    g_.add_dep(brought_back, rec.first);
    if (lost_checkpoint && brought_back == kNoOp) {  // no copy priced: it simply is back
      alloc_at_start(rec.first, MemCategory::kActivations, own.stored);
    }
    // The incoming gradient is here before the recompute starts; the recompute's saved tensors
    // stay to the end of the layer's backward.
    alloc_at_start(rec.first, MemCategory::kActivations, own.upstream);
    hold_pass_activations(rec, own);
    end_use(rec.last);
  }
  begin_use();
  if (!has_recompute_ && ahead) emit_ckpt_h2d(micro, layer - 1);
  const PassOps bwd = emit_pass(c_.layer_pass(costmodel::StepCosts::Pass::kBackward, layer), true, mp + "bwd.L" + li + ".", layer);
  attach_first(bwd.first);
  g_.add_dep(brought_back, bwd.first);
  g_.add_dep(reduction_two_layers_above(layer), bwd.first);
  alloc_at_start(bwd.first, MemCategory::kActivations, own.backward_extra - (has_recompute_ ? own.upstream : 0.0));
  alloc_at_start(bwd.first, MemCategory::kGrads, own.grad_transient);
  alloc_at_start(bwd.first, MemCategory::kBuffers, t_.reduce_copy_bytes);
  free_at_end(bwd.last, MemCategory::kActivations, own.backward_extra + own.stored + (has_recompute_ ? own.saved : 0.0) +
                                                       own.router_logits);  // its logits' gradient
  free_at_end(bwd.last, MemCategory::kGrads, own.grad_transient);
  if (layer + 1 == c_.layers) free_at_end(bwd.last, MemCategory::kParams, t_.reuse_kept_bytes);
  end_use(bwd.last);

  const double reduce_s = c_.reduces_in(micro) ? c_.grad_reduce_s : 0.0;  // ZeRO 0/1: only at the boundary
  const OpId reduce = add_optional(mp + "reduce.L" + li, Resource::kComm, OpCategory::kZero, reduce_s);
  g_.add_dep(bwd.last, reduce);
  free_at_end(reduce != kNoOp ? reduce : bwd.last, MemCategory::kBuffers, t_.reduce_copy_bytes);
  if (reduce != kNoOp) reductions_.push_back(reduce);
  layer_reduce_[layer] = reduce;
}

// A backward may not start while the reduction two layers above is pending: DeepSpeed's hooks
// block on the bucket when reductions fall behind, so at most two reduce copies are alive.
OpId StepGraphBuilder::reduction_two_layers_above(int layer) const {
  return layer + 2 < c_.layers ? layer_reduce_[layer + 2] : kNoOp;
}

void StepGraphBuilder::emit_embedding_backward(int micro) {
  const std::string mp = micro_prefix(micro);
  begin_use();
  const OpId embed = add_compute(mp + "embed.bwd", OpCategory::kCompute, c_.embed_bwd_s);
  attach_first(embed);
  g_.add_dep(reduction_two_layers_above(-1), embed);  // the embedding is "layer -1"
  alloc_at_start(embed, MemCategory::kGrads, t_.head_grad_transient_bytes);
  alloc_at_start(embed, MemCategory::kBuffers, t_.reduce_copy_bytes);
  free_at_end(embed, MemCategory::kGrads, t_.head_grad_transient_bytes);
  free_at_end(embed, MemCategory::kActivations, t_.step_inputs_bytes);  // allocated by embed.fwd
  end_use(embed);
  const OpId reduce =
      add_optional(mp + "reduce.embed", Resource::kComm, OpCategory::kZero,
                   c_.reduces_in(micro) ? c_.embed_grad_reduce_s : 0.0);
  g_.add_dep(embed, reduce);
  free_at_end(reduce != kNoOp ? reduce : embed, MemCategory::kBuffers, t_.reduce_copy_bytes);
  if (reduce != kNoOp) reductions_.push_back(reduce);
}

// After every reduction: Adam on the GPU, or grads to the host, host Adam, params back; then
// the ZeRO-1/2 all-gather of the updated weights.
void StepGraphBuilder::emit_optimizer() {
  const bool on_host = c_.grad_d2h_s > 0 || c_.param_h2d_s > 0;
  const OpId grad_d2h = add_optional("opt.grad_d2h", Resource::kD2H, OpCategory::kOffload, c_.grad_d2h_s);
  const OpId adam = on_host ? add("opt.adam", Resource::kHost, OpCategory::kOptimizer, c_.optimizer_s)
                            : add_compute("opt.adam", OpCategory::kOptimizer, c_.optimizer_s);
  const OpId param_h2d = add_optional("opt.param_h2d", Resource::kH2D, OpCategory::kOffload, c_.param_h2d_s);
  const OpId allgather =
      add_optional("opt.param_allgather", Resource::kComm, OpCategory::kZero, c_.param_allgather_s);
  const OpId first = grad_d2h != kNoOp ? grad_d2h : adam;
  for (OpId reduce : reductions_) g_.add_dep(reduce, first);
  g_.add_dep(prev_compute_ == adam ? kNoOp : prev_compute_, first);  // after the last backward
  g_.add_dep(grad_d2h, adam);
  g_.add_dep(adam, param_h2d);
  g_.add_dep(param_h2d != kNoOp ? param_h2d : adam, allgather);
  alloc_at_start(adam, MemCategory::kOptimizer, t_.optimizer_transient_bytes);
  free_at_end(adam, MemCategory::kOptimizer, t_.optimizer_transient_bytes);
  // A stack that reduces after the backward (costmodel reduce_after_backward_bytes): priced with
  // the step, as the costmodel's optimizer-step moment does.
  alloc_at_start(adam, MemCategory::kBuffers, t_.reduce_after_backward_bytes);
  free_at_end(adam, MemCategory::kBuffers, t_.reduce_after_backward_bytes);
}

void StepGraphBuilder::build() {
  g_.initial_bytes = t_.persistent;
  g_.slack = t_.slack;
  plan_uses();
  issue_gather(0);
  for (const int64_t micro : micro_steps_) {
    const int m = static_cast<int>(micro);  // at most grad_accum_steps' bound, 2^20
    ckpt_d2h_.assign(c_.layers, kNoOp);
    ckpt_h2d_.assign(c_.layers, kNoOp);
    layer_reduce_.assign(c_.layers, kNoOp);
    emit_embedding_forward(m);
    for (int i = 0; i < c_.layers; ++i) emit_forward_layer(m, i);
    emit_loss(m);
    for (int i = static_cast<int>(c_.layers) - 1; i >= 0; --i) emit_backward_layer(m, i);
    emit_embedding_backward(m);
  }
  emit_optimizer();
}

}  // namespace spplan::sim::detail

namespace spplan::sim {

OpGraph build_step_graph(const costmodel::StepCosts& costs, const MemoryTerms& terms) {
  std::vector<int64_t> every(static_cast<size_t>(std::max<int64_t>(0, costs.micro_steps)));
  std::iota(every.begin(), every.end(), int64_t{0});
  return build_step_graph(costs, terms, every);
}

OpGraph build_step_graph(const costmodel::StepCosts& costs, const MemoryTerms& terms,
                         const std::vector<int64_t>& micro_steps) {
  OpGraph graph;
  detail::StepGraphBuilder(costs, terms, micro_steps, &graph).build();
  return graph;  // NRVO: no copy of the adjacency list
}

}  // namespace spplan::sim
