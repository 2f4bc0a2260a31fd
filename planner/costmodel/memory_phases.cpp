// The moments of a step at which memory can peak, each as a breakdown by category.
#include <algorithm>

#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

using B = MemoryBreakdown;

// Activations every layer has stored when `layers_done` layers have run forward, while a layer
// runs (its forward or backward) or not (the loss).
void add_stored_activations(const PlanSpec& p, double layers_done, bool layer_running, B* m) {
  // The micro-batch's position ids live from the embedding to the last layer's backward.
  if (p.packed_documents) m->add(&B::activations_bytes, "position ids (packed documents)", packed_position_ids_bytes(p));
  m->add(&B::activations_bytes, "input ids + labels", token_ids_bytes(p));
  m->add(&B::activations_bytes, "RoPE cos/sin tables", rope_tables_bytes(p));
  if (p.knobs.act_ckpt == ActCkpt::kNone) {
    m->add(&B::activations_bytes, "saved activations of the earlier layers", layers_saved_bytes(p, layers_done));
  } else if (p.knobs.act_ckpt == ActCkpt::kFull) {
    m->add(&B::activations_bytes, "checkpoints (layer inputs)", layers_done * checkpoint_bytes_per_layer(p));
  } else {
    m->add(&B::activations_bytes, "checkpoints on the device (offloaded)",
           offloaded_checkpoints_kept(p, layers_done, layer_running) * checkpoint_bytes_per_layer(p));
  }
}

// The load-balancing loss's inputs and what it keeps (output_router_logits; transformers 5.24
// modeling_qwen3_moe.py / modeling_mixtral.py): the model returns every mixture layer's router
// logits (OutputRecorder of the router's F.linear output, activation dtype), held from that layer's
// forward to the loss; load_balancing_loss_func softmaxes each layer's in its dtype and keeps that
// output for its backward (the fp32 copy it sums is freed at once); its backward writes the logits'
// gradients, which wait until each layer's backward takes its own. In layers' worth of one layer's
// logits: the forward's last layer has all of them, the loss forward the logits and the softmax
// outputs, the loss backward the outputs and the gradients, the last layer's backward the gradients.
void add_router_logits(const PlanSpec& p, double layers_worth, const char* what, B* m) {
  const double bytes = router_logits_bytes_per_layer(p);
  if (bytes > 0) m->add(&B::activations_bytes, what, layers_worth * bytes);
}

// Allocator slack (reserved - allocated) comes from what is allocated and freed within a step:
// activations, logits, gathered parameters, transient gradients and buffers. The states allocated
// once at start-up (weights, gradients, optimizer state, the reduce bucket) are packed and never
// freed, so they leave no cached free blocks behind. With expandable segments, one H100 measured
// 0.03-1.13 GiB of slack against 2.8-67 GiB of such transient memory: 1-10% of it, 4% on average,
// while the same slack was 0.1-3.4% of everything allocated (../shared/validation/
// gpu_h100_measured.csv, the seven HF runs with expandable_segments:True).
void add_fragmentation(const AllocatorSlack& slack, B* m, const std::string& phase, int layer) {
  const double allocated = m->total_bytes() - m->overhead_bytes;
  m->add(&B::overhead_bytes, "allocator slack", slack.bytes(allocated));
  m->slack_given_back_bytes = slack.given_back(allocated);
  m->peak_phase = phase;
  m->peak_layer = layer;
}

// The last layer's backward on top of the stored activations: the incoming gradient, then the
// larger of the recompute's forward all-to-all (checkpointing at sp > 1: the recompute has saved
// only its first norm's tensors by then) and the backward's own moments on the finished recompute.
void add_layer_backward(const PlanSpec& p, B* bwd) {
  const LayerBackwardMoments lb = layer_backward_moments(p);
  bwd->add(&B::activations_bytes, "incoming gradient", lb.upstream);
  const bool recompute = p.knobs.act_ckpt != ActCkpt::kNone;
  const double saved = recompute ? layer_saved_bytes(p) : 0.0;
  // Ring attention's K/V, dK/dV and dQ accumulators are alive during the attention backward only.
  const double ring_attention = lb.attention + lb.ring;
  const double moment = std::max({lb.mlp, ring_attention, lb.a2a});
  const double grads = layer_grad_transient_bytes(p), reduce_copy = reduce_copy_bytes(p);
  const double exchange = recompute ? ulysses_exchange_moment_bytes(p) : 0.0;
  if (exchange > saved + lb.reentrant_output + moment + grads + reduce_copy) {
    bwd->add(&B::activations_bytes, "recompute's first norm saves and q, k, v", exchange - ulysses_buffer_bytes(p));
    bwd->add(&B::buffers_bytes, "recompute's Ulysses all-to-all copies", ulysses_buffer_bytes(p));
    return;
  }
  if (recompute) bwd->add(&B::activations_bytes, "recomputed layer's saved tensors", saved);
  bwd->add(&B::activations_bytes, "recomputed layer output (reentrant checkpoint)", lb.reentrant_output);
  const char* moment_name = moment == lb.mlp          ? "MLP backward gradients"
                            : moment == ring_attention ? (p.knobs.cp > 1 ? "ring attention backward (K/V, dK/dV and dq accumulators, flash buffers, residual grad)"
                                                                         : "attention backward (dq, dk, dv, accumulators, residual grad; MLP and norm saves freed)")
                                                       : "Ulysses backward all-to-all copies";
  bwd->add(&B::activations_bytes, moment_name, moment);
  bwd->add(&B::grads_bytes, "layer's bf16 gradients before reduction", grads);
  bwd->add(&B::buffers_bytes, "reduce copy of the bucket", reduce_copy);
}

}  // namespace

MemoryBreakdown persistent_memory(const PlanSpec& p) {
  const ModelStateBytes s = model_state_bytes(p);
  MemoryBreakdown m;
  m.add(&B::params_bytes, "weights kept on the device", s.params);
  m.add(&B::grads_bytes, "gradient storage", s.grads);
  m.add(&B::optimizer_bytes, "fp32 master + Adam moments", s.optimizer);
  // The IPG bucket lives from the first reduction on; its flattened copy only during reductions.
  m.add(&B::buffers_bytes, "cuBLAS workspaces", gemm_workspace_bytes(p));
  m.add(&B::buffers_bytes, "reduce bucket", reduce_buffer_bytes(p) - reduce_copy_bytes(p));
  m.add(&B::overhead_bytes, "CUDA context + NCCL buffers", fixed_overhead_bytes(p) - gemm_workspace_bytes(p));
  return m;
}

AllocatorSlack allocator_slack(const PlanSpec& p) {
  const MemoryBreakdown states = persistent_memory(p);
  const double fraction = p.cluster.gpu.allocator_fragmentation;
  const double given_back = p.stack.expandable_segments ? std::max(0.0, fraction - facts::kAllocatorSlackAtLimit) : 0.0;
  return {fraction, states.total_bytes() - states.overhead_bytes, given_back};
}

MemoryPhases memory_phases(const PlanSpec& p) {
  const double layers = p.model.num_hidden_layers;
  const int last = static_cast<int>(p.model.num_hidden_layers) - 1;
  const AllocatorSlack slack = allocator_slack(p);
  MemoryPhases out;

  B& fwd = out.forward = persistent_memory(p);  // the last layer's forward; earlier layers' activations stored
  fwd.add(&B::params_bytes, "gathered layer + prefetch (ZeRO-3)", gathered_params_bytes(p));
  add_stored_activations(p, layers - 1, true, &fwd);
  // Its larger moment: at the Ulysses all-to-all, or once it has saved everything (with a ring,
  // while the ring's buffers are alive in attention).
  const double exchange = ulysses_exchange_moment_bytes(p);
  const double saved = layer_saved_bytes(p), ring = ring_forward_buffer_bytes(p);
  if (exchange > saved + ring) {
    fwd.add(&B::activations_bytes, "this layer's first norm saves and q, k, v", exchange - ulysses_buffer_bytes(p));
    fwd.add(&B::buffers_bytes, "Ulysses all-to-all copies", ulysses_buffer_bytes(p));
  } else {
    fwd.add(&B::activations_bytes, "this layer's saved tensors", saved);
    fwd.add(&B::buffers_bytes, "ring attention K/V buffers + output/LSE merge", ring);
  }
  add_router_logits(p, layers, "router logits kept for the load-balancing loss", &fwd);
  add_fragmentation(slack, &fwd, "forward", last);

  for (B* loss : {&out.loss_forward, &out.loss_backward}) {
    *loss = persistent_memory(p);
    loss->add(&B::params_bytes, "gathered embedding / lm_head (ZeRO-3)", gathered_embedding_bytes(p));
    loss->add(&B::params_bytes, "layers kept gathered for reuse (ZeRO-3)", reuse_kept_params_bytes(p));
    add_stored_activations(p, layers, false, loss);
  }
  out.loss_forward.add(&B::logits_bytes, "logits + loss forward", loss_forward_peak_bytes(p));
  add_router_logits(p, 2 * layers, "router logits and their softmax (load-balancing loss)", &out.loss_forward);
  add_router_logits(p, 2 * layers, "router softmax saves and logit gradients (load-balancing loss)", &out.loss_backward);
  add_fragmentation(slack, &out.loss_forward, "loss forward", -1);
  const LossBackwardMoment loss_bwd = loss_backward_moment(p);
  if (loss_bwd.grads_bytes > 0) {
    out.loss_backward.add(&B::logits_bytes, "LM head backward (logits' and input gradients, saves)", loss_bwd.logits_bytes);
    out.loss_backward.add(&B::grads_bytes, "lm_head weight gradient", loss_bwd.grads_bytes);
  } else {
    out.loss_backward.add(&B::logits_bytes, "loss backward (saved + gradients)", loss_bwd.logits_bytes);
  }
  add_fragmentation(slack, &out.loss_backward, "loss backward", -1);

  // The last layer: recomputed (when checkpointed) and differentiated, all stored activations alive.
  B& bwd = out.layer_backward = persistent_memory(p);
  bwd.add(&B::params_bytes, "gathered layer + prefetch (ZeRO-3)", gathered_params_bytes(p));
  bwd.add(&B::params_bytes, "layers kept gathered for reuse (ZeRO-3)", reuse_kept_params_bytes(p));
  add_stored_activations(p, layers, true, &bwd);
  add_router_logits(p, layers, "router logit gradients waiting for their layers", &bwd);
  add_layer_backward(p, &bwd);
  add_fragmentation(slack, &bwd, "layer backward", last);

  out.optimizer_step = persistent_memory(p);
  out.optimizer_step.add(&B::optimizer_bytes, "fp32 gradient copy of one sub-group", optimizer_step_transient_bytes(p));
  // Priced with the step's own transient (as the simulator places it): at most the sum, since the
  // reduction finishes before the step starts.
  out.optimizer_step.add(&B::buffers_bytes, "converted copy of one bucket (reduced after the backward)",
                         reduce_after_backward_bytes(p));
  add_fragmentation(slack, &out.optimizer_step, "optimizer step", -1);
  return out;
}

MemoryBreakdown peak_memory(const PlanSpec& p) {
  const MemoryPhases phases = memory_phases(p);
  MemoryBreakdown peak = phases.forward;
  for (const MemoryBreakdown* m : {&phases.loss_forward, &phases.loss_backward, &phases.layer_backward,
                                   &phases.optimizer_step}) {
    if (m->total_bytes() > peak.total_bytes()) peak = *m;
  }
  return peak;
}

}  // namespace spplan::costmodel
