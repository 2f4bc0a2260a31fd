// A mixture-of-experts MLP as transformers 5.24 trains it: Qwen3MoeSparseMoeBlock and
// MixtralSparseMoeBlock with the eager experts (modeling_qwen3_moe.py, modeling_mixtral.py;
// docs/research/issue42-moe.md 2.1-2.4), and the load-balancing loss it adds when config.json sets
// output_router_logits (load_balancing_loss_func).
//
// Routing: logits = x W_router^T (no bias), a softmax over all E experts in fp32, the top k, divided
// by their sum when norm_topk_prob; Qwen3 casts the weights back to the logits' dtype, Mixtral keeps
// them fp32 until the add. GLM-4.5 (Glm4MoeMoE, modeling_glm4_moe.py): fp32 logits, sigmoid scores,
// the experts picked with a correction bias among the best groups, and a shared expert on every
// token added to the routed ones (moe.cpp sigmoid_routing). transformers keeps GLM's router weight
// in fp32 in a bf16 model (_keep_in_fp32_modules_strict); the engine's is in the model's dtype,
// cast to fp32 for the product. Experts: each expert that receives tokens gathers their rows, runs its
// SwiGLU (gate|up stacked as one GEMM, as the dense MLP) and down projection, scales each row by its
// routing weight and index_adds it into a zero tensor of the input's shape, expert by expert in
// order: every token's k outputs are summed in that order, as transformers sums them. Dropless: no
// capacity, no token is dropped.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan::engine {

struct MoeWeights {
  at::Tensor router;   // [E, h]
  // [E]: GLM-4.5's e_score_correction_bias, added to the scores only to pick the experts. A buffer
  // in transformers, never trained: a parameter here whose gradient stays 0 (no decay, so AdamW
  // leaves it as it is).
  at::Tensor router_bias;
  at::Tensor gate_up;  // [E, 2 i, h]: each expert's gate rows, then its up rows (Qwen3MoeExperts.gate_up_proj)
  at::Tensor down;     // [E, h, i]
  at::Tensor shared_gate_up;  // [2 i_s, h]: GLM-4.5's shared expert (Glm4MoeMoE.shared_experts)
  at::Tensor shared_down;     // [h, i_s]
};

struct MoeOutput {
  at::Tensor out;            // [b, n, h]
  at::Tensor router_logits;  // [b n, E], in the activations' dtype: the load-balancing loss's input
};

// The mixture on x [b, n, h] (the post-attention RMSNorm's output). fused_swiglu: each expert's
// SwiGLU through fused_kernels.hpp's op (with --tiled-loss, as the dense MLP).
MoeOutput moe_mlp(const at::Tensor& x, const MoeWeights& w, const ModelSpec& spec, bool fused_swiglu);

// This rank's share of the load-balancing loss of one forward pass, `router_logits` holding every
// mixture layer's logits of this rank's tokens. transformers pools the layers: with C_e the (token,
// slot) assignments to expert e over all layers (the top k of each layer's softmax, taken again in
// the logits' dtype), P_e the sum of expert e's softmax probabilities over all layers and tokens,
// and R = layers x tokens, loss = E sum_e (C_e / R) (P_e / R). The sequence's tokens are spread
// over its sp x cp ranks: C and R are summed over that group (no gradient flows through C), and
// each rank's share is E sum_e (C_e / R) (P_e(rank) / R), so the shares add up to transformers'
// loss of the whole sequence and so do their gradients. Returns a 0-dimensional fp32 tensor.
at::Tensor load_balancing_share(const std::vector<at::Tensor>& router_logits, const ModelSpec& spec, Comm& comm);

}  // namespace spplan::engine
