#include "simulator/memory_terms.hpp"

#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/ring.hpp"

namespace spplan::sim {
namespace cm = costmodel;
namespace {

void set(MemBytes* bytes, MemCategory category, double value) { (*bytes)[static_cast<int>(category)] = value; }

MemBytes persistent_bytes(const PlanSpec& p) {
  const cm::MemoryBreakdown m = cm::persistent_memory(p);
  MemBytes bytes{};
  set(&bytes, MemCategory::kParams, m.params_bytes);
  set(&bytes, MemCategory::kGrads, m.grads_bytes);
  set(&bytes, MemCategory::kOptimizer, m.optimizer_bytes);
  set(&bytes, MemCategory::kBuffers, m.buffers_bytes);
  set(&bytes, MemCategory::kOverhead, m.overhead_bytes);
  return bytes;
}

using LayerBytes = MemoryTerms::LayerBytes;

// One decoder layer's terms, as the costmodel prices them for `p`'s model.
LayerBytes layer_bytes(const PlanSpec& p) {
  LayerBytes b;
  b.saved = cm::layer_saved_bytes(p);
  b.stored = p.knobs.act_ckpt == ActCkpt::kNone ? b.saved : cm::checkpoint_bytes_per_layer(p);
  b.backward_extra = cm::layer_backward_extra_bytes(p);
  b.upstream = cm::layer_backward_moments(p).upstream;
  b.gathered = cm::layer_gathered_bytes(p);
  b.grad_transient = cm::layer_grad_transient_bytes(p);
  b.router_logits = cm::router_logits_bytes_per_layer(p);
  return b;
}

}  // namespace

MemoryTerms::LayerBytes MemoryTerms::layer(int index) const {
  if (index < dense_layers) return dense_layer;
  return {.stored = stored_bytes_per_layer,
          .saved = layer_saved_bytes,
          .backward_extra = layer_backward_extra_bytes,
          .upstream = layer_upstream_bytes,
          .gathered = layer_gathered_bytes,
          .grad_transient = layer_grad_transient_bytes,
          .router_logits = router_logits_bytes_per_layer};
}

MemoryTerms memory_terms(const PlanSpec& p) {
  MemoryTerms t;
  t.persistent = persistent_bytes(p);
  t.slack = cm::allocator_slack(p);
  // The per-layer terms: the layer's (a mixture's: its mixture layers'), and below the dense first layers'.
  const LayerBytes own = layer_bytes(p);
  t.stored_bytes_per_layer = own.stored;
  t.router_logits_bytes_per_layer = own.router_logits;
  t.checkpoints_offloaded = p.knobs.act_ckpt == ActCkpt::kOffload;
  t.checkpoints_kept_on_device = static_cast<int>(p.stack.offloaded_checkpoints_on_device);
  t.checkpoints_reload_ahead = p.stack.offloaded_checkpoints_on_device > 1;
  t.checkpoints_only_while_running = p.stack.offloaded_checkpoints_only_while_running;
  t.layer_saved_bytes = own.saved;
  t.layer_backward_extra_bytes = own.backward_extra;
  t.layer_upstream_bytes = own.upstream;
  t.ulysses_buffer_bytes = cm::ulysses_buffer_bytes(p);
  t.ulysses_exchange_held_bytes = cm::ulysses_exchange_moment_bytes(p) - t.ulysses_buffer_bytes;
  t.ring_buffer_bytes = cm::ring_forward_buffer_bytes(p);
  t.step_inputs_bytes = cm::step_inputs_bytes(p);
  t.loss_forward_peak_bytes = cm::loss_forward_peak_bytes(p);
  t.loss_saved_bytes = cm::loss_saved_bytes(p);
  const cm::LossBackwardMoment loss_bwd = cm::loss_backward_moment(p);
  t.loss_backward_peak_bytes = loss_bwd.logits_bytes;
  t.loss_backward_grads_bytes = loss_bwd.grads_bytes;
  t.layer_gathered_bytes = own.gathered;
  t.embedding_gathered_bytes = cm::gathered_embedding_bytes(p);
  t.prefetch_window_bytes = cm::gathered_params_bytes(p) - t.layer_gathered_bytes;
  t.reuse_kept_bytes = cm::reuse_kept_params_bytes(p);
  t.layer_grad_transient_bytes = own.grad_transient;
  t.head_grad_transient_bytes = cm::head_grad_transient_bytes(p);
  t.reduce_copy_bytes = cm::reduce_copy_bytes(p);
  t.optimizer_transient_bytes = cm::optimizer_step_transient_bytes(p);
  t.reduce_after_backward_bytes = cm::reduce_after_backward_bytes(p);
  if (p.model.is_moe() && p.model.first_dense_layers > 0) {
    t.dense_layers = static_cast<int>(p.model.first_dense_layers);
    t.dense_layer = layer_bytes(cm::dense_layer_plan(p));
  }
  return t;
}

}  // namespace spplan::sim
