// StepCosts: the duration of every operation of one training step on one (representative) rank,
// priced by the costmodel. The analytical estimate sums them under written overlap rules; the
// simulator schedules the same operations on resources. With no overlap both equal serial_s().
//
// One step = grad_accum_steps micro steps (forward, recompute, backward over all layers), then the
// gradient reduction finishes and the optimizer steps once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// One decoder layer in one pass (forward, recompute-forward, or backward). Times in seconds.
struct LayerPassCosts {
  double norm_s = 0;          // the two RMSNorms + residual adds + RoPE (memory-bound elementwise)
  double qkv_s = 0;           // Q, K, V projections (GEMMs)
  double a2a_qkv_s = 0;       // Ulysses sequence->heads all-to-all of q, k, v (0 when sp == 1)
  double attention_s = 0;     // flash-style causal attention on s tokens, nh/P heads
  double a2a_out_s = 0;       // Ulysses heads->sequence all-to-all of the attention output
  double out_proj_s = 0;      // output projection
  double mlp_s = 0;           // gate, up, SiLU*mul, down (all tiles together when tiled)
  int64_t mlp_tiles = 1;      // number of sequence tiles of the MLP (1 = not tiled)
  // Ring attention (cp > 1, ring.hpp): attention_s runs as attention_blocks equal blocks, each
  // followed by its share of cp_merge_s; ring hop i overlaps block i and its merge and only its
  // excess is exposed; cp_pre_s / cp_post_s (the all-gather variant, the backward's last dK/dV
  // hop) wait in line before / after attention.
  int64_t attention_blocks = 1;
  double cp_merge_s = 0;      // the blocks' fp32 merges (ring.hpp RingMergeTraffic), on the compute stream
  double cp_pre_s = 0;
  double cp_hop_s = 0;
  int64_t cp_hops = 0;
  double cp_post_s = 0;

  double compute_s() const { return norm_s + qkv_s + attention_s + cp_merge_s + out_proj_s + mlp_s; }
  double a2a_s() const { return a2a_qkv_s + a2a_out_s; }
  double attention_block_s() const { return attention_s / static_cast<double>(attention_blocks); }
  // What a hop hides behind: its attention block and that block's merge, both before its wait.
  double cp_hop_window_s() const { return (attention_s + cp_merge_s) / static_cast<double>(attention_blocks); }
  double cp_comm_s() const { return cp_pre_s + static_cast<double>(cp_hops) * cp_hop_s + cp_post_s; }
  double cp_exposed_s() const {
    return cp_pre_s + cp_post_s + static_cast<double>(cp_hops) * std::max(0.0, cp_hop_s - cp_hop_window_s());
  }
  double total_s() const { return compute_s() + a2a_s() + cp_exposed_s(); }
};

// A layer's three passes.
struct LayerPasses {
  LayerPassCosts forward, recompute, backward;
};

struct StepCosts {
  int64_t layers = 0;
  // The first layer whose MLP is a mixture of experts (-1: none; GLM-4.5's dense first layers come
  // before it): a timeline names its MLP `experts`.
  int64_t first_mixture_layer = -1;
  // A model with two kinds of layer (dense first layers before mixtures, first_mixture_layer > 0):
  // each kind's own passes, what a timeline draws for each layer (layer_pass). The passes below are
  // their mean over the layers, what the step's sums use (step_costs.cpp mix_in_dense_layers).
  LayerPasses dense_layer, mixture_layer;
  // Layer `layer`'s own pass: its kind's where the model has two, else the passes below.
  enum class Pass { kForward, kRecompute, kBackward };
  const LayerPassCosts& layer_pass(Pass pass, int64_t layer) const;
  int64_t micro_steps = 1;        // grad_accum_steps
  // Micro steps whose backward reduces gradients: every one at ZeRO 2/3 (each backward
  // reduce-scatters into the partition), only the last at ZeRO 0/1, where DeepSpeed reduces at the
  // gradient accumulation boundary and earlier micro steps accumulate locally.
  int64_t reducing_micro_steps = 1;

  // Per micro step.
  LayerPassCosts forward;          // per layer
  LayerPassCosts recompute;        // per layer; zero when act_ckpt == none
  LayerPassCosts backward;         // per layer
  double embed_fwd_s = 0, embed_bwd_s = 0;
  double loss_fwd_s = 0, loss_bwd_s = 0;  // lm_head + cross-entropy (all tiles)
  int64_t loss_tiles = 1;
  double param_gather_s = 0;       // ZeRO-3 all-gather of one layer's params (per fwd/recompute/bwd use)
  double param_fetch_h2d_s = 0;    // offload_params: one layer's partition (NVMe->) host->device before its gather
  double embed_gather_s = 0;       // ZeRO-3 all-gather of the embedding (and untied lm_head)
  double grad_reduce_s = 0;        // one layer's gradient reduce-scatter (ZeRO>=2) or all-reduce (ZeRO 0/1)
  double embed_grad_reduce_s = 0;  // the same for embedding / lm_head
  double ckpt_d2h_s = 0;           // act_ckpt == offload: one layer's checkpoint device->host
  double ckpt_h2d_s = 0;           // ... and back before its recompute

  // Per optimizer step.
  double grad_d2h_s = 0;           // offload_optimizer: gradient partition device->host
  double optimizer_s = 0;          // Adam over this rank's partition (GPU or host CPU / NVMe)
  double param_h2d_s = 0;          // offload_optimizer: updated bf16 partition host->device
  double param_allgather_s = 0;    // ZeRO 1/2: all-gather of updated params after the step

  // Sums used by the estimate and checked against the simulator.
  double micro_step_compute_s() const;  // all compute-stream work of one micro step
  double micro_step_a2a_s() const;      // all Ulysses all-to-alls of one micro step
  double micro_step_cp_comm_s() const;  // all ring-attention traffic of one micro step
  double micro_step_cp_exposed_s() const;  // the part of it attention does not hide
  double micro_step_gather_s() const;   // ZeRO-3 parameter all-gathers of one micro step
  double micro_step_reduce_s() const;   // gradient reductions of one reducing micro step
  bool reduces_in(int64_t micro) const { return micro >= micro_steps - reducing_micro_steps; }
  double step_zero_comm_s() const;      // all ZeRO gathers and reductions of one step
  double micro_step_offload_s() const;  // checkpoint and parameter copies of one micro step
  double optimizer_phase_s() const;     // grad_d2h + optimizer + param_h2d + param_allgather
  double serial_s() const;              // everything, one after another (no overlap)
};

// REQUIRES: check_plan(plan) is ok.
StepCosts step_costs(const PlanSpec& plan);

}  // namespace spplan::costmodel
