// The Llama/Qwen-style decoder the engine trains, built from the planner's ModelSpec:
// embedding -> L x [x + attn(RMSNorm(x)); x + SwiGLU(RMSNorm(x))] -> RMSNorm -> head.
// Attention: RoPE, grouped-query, optional per-head q/k RMSNorm (Qwen3), Ulysses over comm's SP
// group. fp32 or bf16 (precision.hpp), on CPU or CUDA. The head is the embedding when
// tie_word_embeddings.
//
// All parameters are views into one flat buffer (and their grads into a second), so the gradient
// all-reduce, AdamW and checkpoints each work on one contiguous tensor. Initialisation depends
// only on the seed: identical on every rank, for every sp and every ZeRO stage.
// ZeRO (zero.hpp): the flat buffers are in ZeroLayout's padded unit layout; from stage 2 the grads
// buffer is this rank's shard, at stage 3 the params buffer too, and the forward takes each unit's
// parameters from zero_unit_params (gathered, and reduce-scattered in the backward).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <memory>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/model/attention.hpp"
#include "engine/model/checkpointed_layer.hpp"
#include "engine/model/moe.hpp"
#include "engine/model/rope.hpp"
#include "engine/parallel/comm.hpp"
#include "engine/parallel/zero.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan::engine {

struct LayerParams {
  at::Tensor attn_norm;   // [h]
  at::Tensor wqkv;        // [(nh + 2 n_kv) d, h]: q, k, v projections stacked (one GEMM)
  at::Tensor bqkv;        // [(nh + 2 n_kv) d]: their biases (attention_bias only: Qwen2)
  at::Tensor q_norm;      // [d] (qk_norm only)
  at::Tensor k_norm;      // [d] (qk_norm only)
  at::Tensor wo;          // [h, nh d]
  at::Tensor mlp_norm;    // [h]
  at::Tensor w_gate_up;   // [2 i, h]: gate and up stacked (a dense layer)
  at::Tensor w_down;      // [h, i]
  MoeWeights experts;     // a mixture layer's router and experts instead (moe.hpp)
  bool mixture = false;   // a mixture layer (not one of GLM-4.5's dense first layers)
  std::vector<at::Tensor> all() const;
};

class Model {
 public:
  // Allocates and initialises the parameters (normal(0, 0.02) matrices, ones for norms, in
  // declaration order from one generator seeded with `seed`) and zeroed grads.
  // `device`: kCPU here; a CUDA device on GPUs (compiled, not exercised on this machine).
  // `seq_len`: the run's sequence length, which dynamic RoPE scales by (rope.hpp).
  Model(const ModelSpec& spec, uint64_t seed, Comm& comm, const Knobs& knobs, c10::Device device, int64_t seq_len);
  ~Model();

  // The decoder up to the final norm's input: embedding and every layer. inputs: [b, s/P] int64;
  // first_position: global position of column 0. Packed documents (--eos-id): `positions` [b, s/P]
  // int64, each token's position within its document, and `doc_starts` per row (attention.hpp);
  // undefined / empty otherwise. Returns the hidden states [b, s/P, h].
  at::Tensor forward_layers(const at::Tensor& inputs, int64_t first_position, const at::Tensor& positions = {},
                            const DocStarts& doc_starts = {});
  // Sum of the cross-entropy of this rank's tokens whose label is not kIgnoreLabel, from the
  // hidden states forward_layers returned: final norm, head and loss. labels: [b, s/P] int64.
  at::Tensor loss_sum(const at::Tensor& hidden, const at::Tensor& labels);

  // A mixture whose config sets output_router_logits: this rank's share of the load-balancing loss
  // of the last forward_layers (moe.hpp load_balancing_share; its router logits are released);
  // undefined for other models.
  at::Tensor load_balancing_share();

  // Stage < 3: the full parameters (padded layout); stage 3: this rank's shard.
  at::Tensor& params_flat() { return params_flat_; }
  // What autograd accumulates into. Stage < 2: the full gradients; stage 2, 3: this rank's shard.
  at::Tensor& grads_flat() { return grads_flat_; }
  // offload_optimizer at stage 2, 3: the grads buffer is host memory (engine/parallel/offload.hpp).
  bool grads_on_host() const { return grads_on_host_; }
  int64_t num_params() const { return layout_.num_params(); }
  const ZeroLayout& zero_layout() const { return layout_; }
  // What this rank's optimizer steps, one view per unit: its chunk of params and of grads (all of
  // them at stage 0). AdamW moments are shard-shaped at every stage (the full layout at stage 0).
  std::vector<at::Tensor> owned_params() const;
  std::vector<at::Tensor> owned_grads() const;

 private:
  class UnitUse;
  void bind_unit(size_t unit, const std::vector<at::Tensor>& params);
  std::vector<at::Tensor> checkpointed_layer(size_t l, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                                             const DocStarts& docs);

  // The layer's output, then its router logits when the load-balancing loss needs them.
  std::vector<at::Tensor> layer(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                                const DocStarts& docs) const;
  // The layer's MLP (dense, or the mixture) on the post-attention norm's output; a mixture's router
  // logits go to *router_logits when keeps_router_logits.
  at::Tensor mlp(const LayerParams& L, const at::Tensor& normed, std::vector<at::Tensor>* router_logits) const;
  // The attention of a layer from its normalised input: [b, n, heads, d], o_proj's input. Its q,
  // k and v are freed when it returns, before the MLP runs, as they are when HF's attention
  // module returns (held to the end of the layer they cost a block of [tokens, q + 2 kv] through
  // the MLP's recompute, as measured).
  at::Tensor attention(const LayerParams& L, const at::Tensor& normed, const at::Tensor& cos, const at::Tensor& sin,
                       const DocStarts& docs) const;
  // The layer's q and k [b, n, heads, d] after their norms (Qwen3) and RoPE.
  std::pair<at::Tensor, at::Tensor> rotated_qk(const LayerParams& L, const at::Tensor& normed, const at::Tensor& cos,
                                               const at::Tensor& sin) const;
  at::Tensor head_loss(const at::Tensor& x, const at::Tensor& labels) const;
  bool keeps_router_logits() const { return spec_.is_moe() && spec_.output_router_logits; }

  ModelSpec spec_;
  Comm& comm_;
  Knobs knobs_;  // act_ckpt, tiling and ZeRO settings of the run
  int64_t rope_seq_len_;  // what dynamic RoPE scales by (rope.hpp)
  at::Tensor params_flat_, grads_flat_;
  bool grads_on_host_ = false;
  ZeroLayout layout_;  // units: embedding, each layer, final norm (+ head when untied)
  // Stage 2, 3: per unit, the autograd leaf of this rank's chunk (its .grad: a view of grads_flat_)
  // and what zero_unit_params needs; the named parameters below are bound only while in use.
  std::vector<at::Tensor> shard_leaves_;
  std::vector<ZeroUnitContext> unit_contexts_;
  at::Tensor embed_, final_norm_, lm_head_;
  std::vector<LayerParams> layers_;
  // keeps_router_logits: each layer's router logits from its forward to the load-balancing loss,
  // as transformers' OutputRecorder keeps them until the loss.
  std::vector<at::Tensor> router_logits_;
  // act_ckpt full: the recompute closures of the last forward; they must outlive its backward.
  std::vector<LayerFn> layer_fns_;
};

}  // namespace spplan::engine
