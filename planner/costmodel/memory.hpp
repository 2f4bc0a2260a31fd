// Memory per GPU and host memory per node. Every term is a pure function of the plan, bytes,
// with its source beside the formula in memory*.cpp (MEMORY-FACTS.md section numbers).
//
// The peak is the largest of a few moments of the step (memory_phases()), each the persistent
// state plus what is alive at that moment. The simulator allocates and frees the same terms
// event by event, so its peak equals what this one needs (needed_bytes) for the same schedule.
#pragma once

#include <algorithm>
#include <array>
#include <string>

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// One named tensor (or group of tensors) alive at a moment, bytes. Names are string literals.
struct MemoryTerm {
  const char* name = "";
  double bytes = 0;
};

struct MemoryBreakdown {     // per GPU, bytes, at the peak
  double params_bytes = 0;       // bf16 weights resident (replicated or ZeRO partition) + gathered
  double grads_bytes = 0;        // gradient storage (full, partition) + transient layer grads
  double optimizer_bytes = 0;    // fp32 master + Adam moments on the device
  double activations_bytes = 0;  // checkpoints + the working set of the layer at the peak
  double logits_bytes = 0;       // logits and cross-entropy buffers at the peak
  double buffers_bytes = 0;      // reduce buckets, all-to-all buffers, cuBLAS workspace
  double overhead_bytes = 0;     // CUDA context, NCCL, allocator fragmentation
  // The part of the allocator slack in overhead_bytes that the allocator gives back when an
  // allocation would otherwise fail (AllocatorSlack::given_back): what a run that keeps it
  // reserved shows, but does not need.
  double slack_given_back_bytes = 0;
  std::string peak_phase;        // which moment of the step the peak is
  int peak_layer = -1;           // the decoder layer running at that moment (0-based), -1 if none
  // What makes up the categories above at that moment, term by term (allocator slack included);
  // each category is the sum of its terms. Filled by add().
  std::array<MemoryTerm, 20> terms{};
  int term_count = 0;
  void add(double MemoryBreakdown::*category, const char* name, double bytes) {
    this->*category += bytes;
    if (bytes != 0 && term_count < static_cast<int>(terms.size())) terms[term_count++] = {name, bytes};
  }
  double total_bytes() const {
    return params_bytes + grads_bytes + optimizer_bytes + activations_bytes + logits_bytes + buffers_bytes +
           overhead_bytes;
  }
  // What the device must hold for the step to run: the total less the slack given back.
  double needed_bytes() const { return total_bytes() - slack_given_back_bytes; }
};

struct HostMemory {  // per node, bytes
  double optimizer_bytes = 0;    // offloaded fp32 master, Adam moments, fp32/bf16 gradient buffers
  double params_bytes = 0;       // offloaded bf16 parameter partitions
  double activations_bytes = 0;  // offloaded activation checkpoints
  double total_bytes() const { return optimizer_bytes + params_bytes + activations_bytes; }
  // On the node's NVMe drives, not in RAM (not in total_bytes): what ZeRO-Infinity swaps there.
  double nvme_bytes = 0;
};

// ---- Parameter counts (elements) ----
// A mixture with dense first layers (GLM-4.5) has two kinds of decoder layer: per_layer and mlp are
// its mixture layer's, the largest (what ZeRO-3 gathers at once); `layers` sums every layer.
struct ParamCounts {
  double per_layer = 0;      // one decoder layer (a mixture's: a mixture layer): attention + MLP + norms
  double attention = 0;      // q, k, v, o projections (+ q/k norms)
  double mlp = 0;            // gate, up, down; a mixture's every expert, its shared expert and its router
  double mlp_active = 0;     // what one token runs through: its k experts, the shared one and the router
  double dense_layer = 0;    // one dense decoder layer (a dense model's: per_layer)
  double layers = 0;         // every decoder layer together
  double mean_layer = 0;     // layers / L: what a layer moves on average (ZeRO's traffic, summed over layers)
  double layers_active = 0;  // what one token runs through in all of them (FLOPs)
  double embedding = 0;      // V x h
  double lm_head = 0;        // V x h, 0 when tied
  double encoders = 0;       // a multimodal model's vision tower and projector: never run on text
  double total = 0;          // Psi
  double largest_tensor = 0; // the largest single parameter (embedding)
};
ParamCounts param_counts(const ModelSpec& model);
// Whether a multimodal model's encoders, which a text step never runs, hold their weights only:
// frozen (TrainingStack::freezes_encoders), or trained on a layout whose optimizer makes no gradient
// or state for a parameter without a gradient (LayoutRecord::state_for_unrun_params: FSDP2).
bool encoders_weights_only(const PlanSpec& p);
// The parameters the optimizer holds and steps: all of them (ParamCounts::total) but encoders that
// hold their weights only. Gradients, the fp32 master and moments, the optimizer step and ZeRO-1/2's
// weight all-gather count these; the weights count every parameter.
double trained_params(const PlanSpec& p);

// ---- Persistent per-GPU model state (bytes) ----
struct ModelStateBytes {
  double params = 0;     // bf16 weights kept on the device between uses
  double grads = 0;      // gradient storage kept on the device
  double optimizer = 0;  // fp32 master + Adam moments kept on the device
};
ModelStateBytes model_state_bytes(const PlanSpec& plan);
double zero3_persistent_elems(const PlanSpec& plan);  // parameters ZeRO-3 never partitions

// ---- Activations (bytes, one rank) ----
double local_tokens(const PlanSpec& plan);                // micro_batch * ceil(seq / sp)
double packed_position_ids_bytes(const PlanSpec& plan);   // packed documents: int64 position ids, 0 otherwise
double token_ids_bytes(const PlanSpec& plan);             // input ids + labels, int64, all step long
double rope_tables_bytes(const PlanSpec& plan);           // RoPE cos and sin, forward to last backward
double step_inputs_bytes(const PlanSpec& plan);           // the three above: embedding forward to its backward
double kv_width_after_a2a(const PlanSpec& plan);          // K (or V) width per local token after the all-to-all
// TiledMLP's shards of one rank's rows: DeepSpeed slices each sequence into ceil(s / h) shards along
// the sequence dimension (MEMORY-FACTS 8.4); an export that sets the count writes this one.
int64_t tiled_mlp_shards(const PlanSpec& plan);
double checkpoint_bytes_per_layer(const PlanSpec& plan);  // hidden state a checkpoint keeps
double checkpoints_on_device_bytes(const PlanSpec& plan); // all kept checkpoints on the device, a layer running
// act_ckpt offload: how many of `layers_done` checkpoints are still on the device (stack rule),
// while a layer runs (its forward or backward) or not (the loss).
double offloaded_checkpoints_kept(const PlanSpec& plan, double layers_done, bool layer_running);
double layer_saved_bytes(const PlanSpec& plan);           // what one layer saves for its backward
// A mixture with dense first layers (ModelSpec::first_dense_layers: GLM-4.5) has two kinds of
// decoder layer. The per-layer terms here are its mixture layers' (the last layers, where the
// phases below are taken); they give a dense layer's for the plan this returns, whose model is
// that dense layer (the dense MLP, no routing). A model of one kind: the plan itself.
PlanSpec dense_layer_plan(const PlanSpec& plan);
// What the first `layers` layers save for their backward together, the dense ones first.
double layers_saved_bytes(const PlanSpec& plan, double layers);
// One mixture layer's router logits [tokens, E] in the activation dtype, which the model returns for
// the load-balancing loss when output_router_logits is set (memory_phases.cpp: who holds them when);
// 0 otherwise.
double router_logits_bytes_per_layer(const PlanSpec& plan);
double layer_backward_extra_bytes(const PlanSpec& plan);  // transients during one layer's backward (incl. a2a)
// The moments of one layer's backward (bytes above the stored checkpoints and the recomputed
// saved tensors); layer_backward_extra_bytes is upstream + reentrant_output + the largest moment.
struct LayerBackwardMoments {
  double upstream = 0;                // the gradient flowing into the layer
  double reentrant_output = 0;        // recomputed layer output a reentrant checkpoint holds
  double mlp = 0;                     // MLP backward: its gradients (TiledMLP: one shard + x_grad)
  double attention = 0;               // attention backward, after the MLP and norm saves are freed
  double a2a = 0;                     // Ulysses backward all-to-all copies, same freed tensors
  double ring = 0;                    // ring attention's buffers on top of `attention` (ring.hpp)
  double freed_before_attention = 0;  // MLP, second-norm and o_proj saves released before attention
};
LayerBackwardMoments layer_backward_moments(const PlanSpec& plan);
double cpu_flash_backward_scratch_bytes(const PlanSpec& plan);  // LibTorch CPU flash backward's per-thread blocks
// Whether the plan's attention runs its window in masked blocks (TrainingStack::window_in_masked_blocks,
// a window shorter than the sequence), and what those blocks add to a layer's attention backward.
bool runs_window_blocks(const PlanSpec& plan);
double window_blocks_backward_bytes(const PlanSpec& plan);
double ulysses_block_bytes(const PlanSpec& plan);         // q, k, v of all tokens, this rank's heads (0 at sp 1)
double ulysses_buffer_bytes(const PlanSpec& plan);        // all-to-all send/recv copies alive in attention
// A layer at its forward all-to-all (sp > 1; 0 at sp 1): what it has saved so far (the first
// norm's), its q, k, v before the exchange and the exchange's copies.
double ulysses_exchange_moment_bytes(const PlanSpec& plan);

// ---- Logits and loss (bytes, one rank) ----
double liger_chunk_tokens(double tokens, double hidden, double vocab);  // FLCE chunk (MEMORY-FACTS 7.2)
// The plan's tiled loss recomputes its chunks in the backward (TrainingStack::tiled_loss_recomputes_chunks:
// TRL's chunked_nll), where Liger's made its gradients in the forward; memory and time both ask here.
inline bool loss_recomputes_chunks(const PlanSpec& plan) {
  return plan.knobs.tiled_loss && plan.stack.tiled_loss_recomputes_chunks;
}
double final_norm_saved_bytes(const PlanSpec& plan);      // final RMSNorm's saved tensors but its output
double head_input_bytes(const PlanSpec& plan);            // the final norm's output, the head's input
double loss_forward_peak_bytes(const PlanSpec& plan);     // while the loss forward runs
double loss_saved_bytes(const PlanSpec& plan);            // kept from the loss forward to its backward
double loss_backward_peak_bytes(const PlanSpec& plan);    // while the cross-entropy's backward runs
// The loss backward's larger moment: the cross-entropy's backward (loss_backward_peak_bytes), or
// once autograd has freed its [s, V] tensors, the LM head's own backward (the logits' gradient,
// the head's input gradient, and at ZeRO >= 2 its full weight gradient before the hook copies it
// out: head_grad_transient_bytes). Liger's tiled loss made both gradients in its forward and scales
// them in place (loss_saved_bytes): its moment has no gradient of its own. A tiled loss that
// recomputes its chunks (TrainingStack::tiled_loss_recomputes_chunks) makes them in the backward: its
// moment is the last chunk's, with the head's weight gradient.
struct LossBackwardMoment {
  double logits_bytes = 0;  // the loss's tensors, the head's input and the final norm's saves
  double grads_bytes = 0;   // the head's weight gradient, when it is part of the moment
};
LossBackwardMoment loss_backward_moment(const PlanSpec& plan);

// ---- ZeRO and communication buffers (bytes, one rank) ----
double gathered_params_bytes(const PlanSpec& plan);       // ZeRO-3: a layer gathered + its prefetch
double gathered_embedding_bytes(const PlanSpec& plan);    // ZeRO-3: embedding / lm_head gathered
double reuse_kept_params_bytes(const PlanSpec& plan);     // ZeRO-3: layers kept gathered at the fwd/bwd turn
double head_grad_transient_bytes(const PlanSpec& plan);   // full grad of the embedding / lm_head
double layer_grad_transient_bytes(const PlanSpec& plan);  // full bf16 grads of one layer before reduction
double reduce_buffer_bytes(const PlanSpec& plan);         // IPG bucket + its reduce copy
double optimizer_step_transient_bytes(const PlanSpec& plan);  // fp32 grad copy during a GPU Adam step
double reduce_after_backward_bytes(const PlanSpec& plan);  // a converted bucket reduced after the backward
double gemm_workspace_bytes(const PlanSpec& plan);        // cuBLAS workspaces
double sp_all_to_all_buffer_bytes(const PlanSpec& plan);  // NCCL buffers of the SP group's peer connections
double fixed_overhead_bytes(const PlanSpec& plan);        // CUDA context + GEMM workspaces + NCCL communicators

double layer_gathered_bytes(const PlanSpec& plan);        // ZeRO-3: one decoder layer's gathered weights
double reduce_copy_bytes(const PlanSpec& plan);           // the flattened copy a reduction makes of the bucket
// What every moment of the step holds: model state, the reduce bucket, workspaces, CUDA context
// and NCCL (no fragmentation: that is added per moment, on what is allocated then).
MemoryBreakdown persistent_memory(const PlanSpec& plan);

// Allocator slack counted as overhead at a moment (memory_phases.cpp says why): `fraction`
// (GpuSpec::allocator_fragmentation) of what is allocated beyond the states allocated once at
// start-up (`exempt_bytes`); of it, `given_back_fraction` of the same base is given back when the
// device runs short (TrainingStack::expandable_segments; else none), the rest is needed.
struct AllocatorSlack {
  double fraction = 0;
  double exempt_bytes = 0;
  double given_back_fraction = 0;
  double bytes(double allocated_bytes) const { return fraction * transient(allocated_bytes); }
  double given_back(double allocated_bytes) const { return given_back_fraction * transient(allocated_bytes); }
  double needed(double allocated_bytes) const { return bytes(allocated_bytes) - given_back(allocated_bytes); }
  double needed_fraction() const { return fraction - given_back_fraction; }  // what a step needs at the limit
  double transient(double allocated_bytes) const { return std::max(0.0, allocated_bytes - exempt_bytes); }
};
AllocatorSlack allocator_slack(const PlanSpec& plan);

// Moments of the step; each is (bytes alive above the persistent model state).
struct MemoryPhases {
  MemoryBreakdown forward;         // last layer's forward with all earlier checkpoints kept
  MemoryBreakdown loss_forward;
  MemoryBreakdown loss_backward;
  MemoryBreakdown layer_backward;  // the last layer's recompute + backward, all checkpoints kept
  MemoryBreakdown optimizer_step;
};
MemoryPhases memory_phases(const PlanSpec& plan);
MemoryBreakdown peak_memory(const PlanSpec& plan);  // the largest phase
HostMemory host_memory(const PlanSpec& plan);

}  // namespace spplan::costmodel
