// MemoryTerms: the costmodel's memory terms for one plan, gathered into a plain struct so the graph
// builder can attach them to operations (and tests can write them by hand). Bytes, one rank.
//
// The builder allocates and frees them so that a no-overlap schedule passes through exactly the
// moments costmodel::memory_phases() describes (see step_graph.hpp for which op holds what).
#pragma once

#include "planner/config/plan_spec.hpp"
#include "simulator/op_graph.hpp"

namespace spplan::sim {

struct MemoryTerms {
  MemBytes persistent{};               // model state, IPG bucket, cuBLAS workspace, context, NCCL
  costmodel::AllocatorSlack slack;     // allocator slack on what ops allocate (costmodel)

  // Activations.
  double stored_bytes_per_layer = 0;   // what a layer leaves for its backward: checkpoint, or all saves
  // A mixture layer's router logits for the load-balancing loss (costmodel
  // router_logits_bytes_per_layer; memory_phases.cpp add_router_logits says who holds them when).
  double router_logits_bytes_per_layer = 0;
  bool checkpoints_offloaded = false;  // act_ckpt = offload: stored copies go to the host ...
  int checkpoints_kept_on_device = 3;  // ... except the last few (DeepSpeed stash + keep_last)
  // Offloaded checkpoints come back one layer ahead (DeepSpeed's offload context, which stashes
  // several) or inside the layer's own backward, synchronously (ArcticTraining's
  // CheckpointFunctionWithCPUOffload and the engine: one checkpoint kept on the device).
  bool checkpoints_reload_ahead = true;
  // Kept only while a layer runs (ArcticTraining and the engine copy inside the layer): the last
  // layer's checkpoint leaves when its forward ends too, and every one comes back for its backward.
  bool checkpoints_only_while_running = false;
  double layer_saved_bytes = 0;        // one layer's saved tensors while it runs (forward, recompute)
  double layer_backward_extra_bytes = 0;  // backward transients, its all-to-all copies included
  double layer_upstream_bytes = 0;        // the incoming gradient, part of the above (with a recompute: from its start)
  double ulysses_buffer_bytes = 0;     // forward / recompute all-to-all copies, first a2a to second
  // Forward: what a layer holds besides the copies at its first all-to-all (first norm's saves,
  // q, k, v), before it has saved the rest (costmodel ulysses_exchange_moment_bytes).
  double ulysses_exchange_held_bytes = 0;
  double ring_buffer_bytes = 0;        // forward / recompute ring attention K/V and merge buffers
  double step_inputs_bytes = 0;        // token ids, labels, RoPE tables: embedding forward to its backward

  // Loss.
  double loss_forward_peak_bytes = 0;
  double loss_saved_bytes = 0;
  // The loss backward's moment (costmodel loss_backward_moment): its logits-side bytes and the
  // head's weight gradient when that gradient is part of it.
  double loss_backward_peak_bytes = 0;
  double loss_backward_grads_bytes = 0;

  // ZeRO-3 gathered parameters.
  double layer_gathered_bytes = 0;     // one decoder layer's full parameters
  double embedding_gathered_bytes = 0; // embedding or lm_head
  double prefetch_window_bytes = 0;    // gathered ahead of the op that uses them
  double reuse_kept_bytes = 0;         // last layers kept gathered across the forward/backward turn

  // Gradients, reduction, optimizer.
  double layer_grad_transient_bytes = 0;
  double head_grad_transient_bytes = 0;  // the embedding's full gradient in its backward
  double reduce_copy_bytes = 0;        // the flattened copy a reduction makes of the bucket
  double optimizer_transient_bytes = 0;
  double reduce_after_backward_bytes = 0;  // a converted bucket, reduced after the backward (engine)

  // The per-layer terms of one decoder layer. A mixture with dense first layers (GLM-4.5) has two
  // kinds: the fields above are its mixture layers', `dense_layer` its first `dense_layers` layers'
  // (costmodel dense_layer_plan); with no dense layers every layer has the fields above.
  struct LayerBytes {
    double stored = 0, saved = 0, backward_extra = 0, upstream = 0, gathered = 0, grad_transient = 0, router_logits = 0;
  };
  int dense_layers = 0;
  LayerBytes dense_layer;
  LayerBytes layer(int index) const;
};

// REQUIRES: check_plan(plan) is ok.
MemoryTerms memory_terms(const PlanSpec& plan);

}  // namespace spplan::sim
