// The Llama/Qwen-style decoder the engine trains, built from the planner's ModelSpec:
// embedding -> L x [x + attn(RMSNorm(x)); x + SwiGLU(RMSNorm(x))] -> RMSNorm -> head.
// Attention: RoPE, grouped-query, optional per-head q/k RMSNorm (Qwen3), Ulysses over comm's SP
// group. fp32 on CPU or CUDA. The head is the embedding when tie_word_embeddings.
//
// All parameters are views into one flat buffer (and their grads into a second), so the gradient
// all-reduce, AdamW and checkpoints each work on one contiguous tensor. Initialisation depends
// only on the seed: identical on every rank and for every sp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/comm.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan::engine {

struct LayerParams {
  at::Tensor attn_norm;   // [h]
  at::Tensor wqkv;        // [(nh + 2 n_kv) d, h]: q, k, v projections stacked (one GEMM)
  at::Tensor q_norm;      // [d] (qk_norm only)
  at::Tensor k_norm;      // [d] (qk_norm only)
  at::Tensor wo;          // [h, nh d]
  at::Tensor mlp_norm;    // [h]
  at::Tensor w_gate_up;   // [2 i, h]: gate and up stacked
  at::Tensor w_down;      // [h, i]
  std::vector<at::Tensor> all() const;
};

class Model {
 public:
  // Allocates and initialises the parameters (normal(0, 0.02) matrices, ones for norms, in
  // declaration order from one generator seeded with `seed`) and zeroed grads.
  // `device`: kCPU here; a CUDA device on GPUs (compiled, not exercised on this machine).
  Model(const ModelSpec& spec, uint64_t seed, Comm& comm, const Knobs& knobs, c10::Device device);
  ~Model();

  // Sum of the cross-entropy of this rank's tokens whose label is not kIgnoreLabel.
  // inputs, labels: [b, s/P] int64; first_position: global position of column 0.
  at::Tensor loss_sum(const at::Tensor& inputs, const at::Tensor& labels, int64_t first_position);

  at::Tensor& params_flat() { return params_flat_; }
  at::Tensor& grads_flat() { return grads_flat_; }
  int64_t num_params() const { return params_flat_.numel(); }

 private:
  at::Tensor layer(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) const;
  at::Tensor head_loss(const at::Tensor& x, const at::Tensor& labels) const;

  ModelSpec spec_;
  Comm& comm_;
  Knobs knobs_;  // act_ckpt, tiling and ZeRO settings of the run
  at::Tensor params_flat_, grads_flat_;
  at::Tensor embed_, final_norm_, lm_head_;
  std::vector<LayerParams> layers_;
  // act_ckpt full: the recompute closures of the last forward; they must outlive its backward.
  std::vector<std::function<at::Tensor(const at::Tensor&)>> layer_fns_;
};

}  // namespace spplan::engine
