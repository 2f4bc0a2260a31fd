// The moments of a step at which memory can peak, each as a breakdown by category.
#include <algorithm>

#include "planner/costmodel/memory.hpp"

namespace spplan::costmodel {
namespace {

// Activations every layer has stored when `layers_done` layers have run forward.
double stored_activations(const PlanSpec& p, double layers_done) {
  if (p.knobs.act_ckpt == ActCkpt::kNone) return layers_done * layer_saved_bytes(p);
  if (p.knobs.act_ckpt == ActCkpt::kFull) return layers_done * checkpoint_bytes_per_layer(p);
  return offloaded_checkpoints_kept(p, layers_done) * checkpoint_bytes_per_layer(p);
}

// Allocator slack (reserved - allocated) comes from what is allocated and freed within a step:
// activations, logits, gathered parameters, transient gradients and buffers. The states allocated
// once at start-up (weights, gradients, optimizer state, the reduce bucket) are packed and never
// freed, so they leave no cached free blocks behind. With expandable segments, one H100 measured
// 0.03-1.13 GiB of slack against 2.8-67 GiB of such transient memory: 1-10% of it, 4% on average,
// while the same slack was 0.1-3.4% of everything allocated (../shared/validation/
// gpu_h100_measured.csv, the seven HF runs with expandable_segments:True).
void add_fragmentation(const AllocatorSlack& slack, MemoryBreakdown* m, const std::string& phase) {
  m->overhead_bytes += slack.bytes(m->total_bytes() - m->overhead_bytes);
  m->peak_phase = phase;
}

}  // namespace

MemoryBreakdown persistent_memory(const PlanSpec& p) {
  const ModelStateBytes s = model_state_bytes(p);
  MemoryBreakdown m;
  m.params_bytes = s.params;
  m.grads_bytes = s.grads;
  m.optimizer_bytes = s.optimizer;
  // The IPG bucket lives from the first reduction on; its flattened copy only during reductions.
  m.buffers_bytes = gemm_workspace_bytes(p) + (reduce_buffer_bytes(p) - reduce_copy_bytes(p));
  m.overhead_bytes = fixed_overhead_bytes(p) - gemm_workspace_bytes(p);
  return m;
}

AllocatorSlack allocator_slack(const PlanSpec& p) {
  const MemoryBreakdown states = persistent_memory(p);
  return {p.cluster.gpu.allocator_fragmentation, states.total_bytes() - states.overhead_bytes};
}

MemoryPhases memory_phases(const PlanSpec& p) {
  const double layers = p.model.num_hidden_layers;
  const AllocatorSlack slack = allocator_slack(p);
  MemoryPhases out;

  out.forward = persistent_memory(p);  // the last layer's forward; earlier layers' activations stored
  out.forward.params_bytes += gathered_params_bytes(p);
  out.forward.activations_bytes = stored_activations(p, layers - 1) + layer_saved_bytes(p);
  out.forward.buffers_bytes += ulysses_buffer_bytes(p);
  add_fragmentation(slack, &out.forward, "forward");

  out.loss_forward = persistent_memory(p);
  out.loss_forward.params_bytes += gathered_embedding_bytes(p) + reuse_kept_params_bytes(p);
  out.loss_forward.activations_bytes = stored_activations(p, layers);
  out.loss_forward.logits_bytes = loss_forward_peak_bytes(p);
  add_fragmentation(slack, &out.loss_forward, "loss forward");

  out.loss_backward = persistent_memory(p);
  out.loss_backward.params_bytes += gathered_embedding_bytes(p) + reuse_kept_params_bytes(p);
  out.loss_backward.activations_bytes = stored_activations(p, layers);
  out.loss_backward.logits_bytes = loss_backward_peak_bytes(p);
  out.loss_backward.grads_bytes += head_grad_transient_bytes(p);
  add_fragmentation(slack, &out.loss_backward, "loss backward");

  // The last layer: recomputed (when checkpointed) and differentiated, all stored activations alive.
  out.layer_backward = persistent_memory(p);
  out.layer_backward.params_bytes += gathered_params_bytes(p) + reuse_kept_params_bytes(p);
  const double recomputed = p.knobs.act_ckpt == ActCkpt::kNone ? 0.0 : layer_saved_bytes(p);
  out.layer_backward.activations_bytes =
      stored_activations(p, layers) + recomputed + layer_backward_extra_bytes(p);
  out.layer_backward.grads_bytes += layer_grad_transient_bytes(p);
  out.layer_backward.buffers_bytes += reduce_copy_bytes(p);
  add_fragmentation(slack, &out.layer_backward, "layer backward");

  out.optimizer_step = persistent_memory(p);
  out.optimizer_step.optimizer_bytes += optimizer_step_transient_bytes(p);
  add_fragmentation(slack, &out.optimizer_step, "optimizer step");
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
