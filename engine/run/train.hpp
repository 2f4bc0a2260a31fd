// One rank's training loop: data -> forward -> token-weighted loss -> backward -> gradient
// all-reduce -> AdamW, timed by phase and measured by the counting allocator.
//
// Loss and gradients: every rank knows its labels before the forward, so the number of valid
// tokens N in the whole global batch (all SP ranks, DP groups and micro steps) is all-reduced first;
// each rank then back-propagates (sum of its token losses) / N, and the gradients are summed over
// the world. The result is the gradient of the global batch's mean token loss, exactly what one
// process computing that batch would get (never a mean of per-rank means).
//
// ZeRO (zero.hpp) changes where state lives, not the math: stage 1 all-reduces the gradients, steps
// AdamW on this rank's chunks only and all-gathers the parameters; stage 2 also keeps only the
// shard of the gradients (reduce-scattered during the backward by the model); stage 3 also keeps
// only the shard of the parameters (gathered by the model around each use), so nothing is
// gathered after the step.
//
// offload_optimizer cpu, as DeepSpeed does it (MEMORY-FACTS 3.1): the AdamW moments, an fp32
// master copy of the owned parameters and an fp32 gradient buffer live on the host, with the
// gradient partition itself (the stage 2, 3 grads, or a host copy of the owned chunk below stage
// 2). The step copies the gradients to the host, runs AdamW there and copies the updated
// parameters back to the device.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/device/memory_meter.hpp"
#include "engine/io/checkpoint_io.hpp"
#include "engine/io/data.hpp"
#include "engine/io/hf_weights.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/model.hpp"
#include "engine/model/parameters.hpp"
#include "engine/parallel/comm.hpp"
#include "engine/run/eval.hpp"
#include "engine/run/options.hpp"
#include "engine/run/step_stats.hpp"

namespace spplan::engine {

// AdamW as torch.optim.AdamW computes it (decoupled weight decay, bias correction; LibTorch's
// fused kernel). lr (the peak; each step's comes from lr_schedule.hpp) and weight_decay come from
// the plan's [optimizer] and the flags (OptimizerSpec), betas and eps too (--adam-beta1/2, --adam-eps;
// defaults 0.9, 0.95, 1e-8: the LLaMA recipe, arXiv:2302.13971 section 2.2).
struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
};
class Trainer {
 public:
  Trainer(const RunOptions& options, Comm& comm, const TokenSource& data);
  ~Trainer();

  StepStats step();
  int64_t steps_done() const { return steps_done_; }
  int64_t next_sequence() const { return next_sequence_; }
  // Where the next step reads --data: the stream position of its first window (data.hpp window_at).
  int64_t next_token() const { return next_token_; }
  int64_t num_params() const { return model_->num_params(); }
  // The SDPA kernel attention runs on (measured at start-up on CUDA; attention.hpp).
  const SdpaChoice& sdpa_choice() const { return sdpa_; }

  // Checkpoint state: parameters, AdamW moments (full and unpadded, whatever the ZeRO stage and
  // world), the default CPU generator; and back. state_blobs() is collective (at ZeRO >= 1 it
  // gathers the shards): every rank calls it, rank 0 gets the blobs and writes them, the others get
  // none; drop_state_blobs() frees the copies.
  std::vector<BlobRef> state_blobs();
  void drop_state_blobs() { host_state_.clear(); }
  CheckpointMeta state_meta() const;
  Status restore(const LoadedCheckpoint& checkpoint);

  // --init-from: the parameters (and the fp32 master) from a Hugging Face folder's weights; each
  // rank reads only what it keeps (its chunks at ZeRO 3).
  void load_weights(const HfWeights& weights);
  // --eval-data: the held-out loss (eval.hpp). Collective.
  EvalResult evaluate(const TokenSource& eval);
  // The parameters, full and unpadded, fp32 on the host (the master when there is one): rank 0
  // gets them, the others an undefined tensor. Collective at ZeRO >= 1 (the shards are gathered).
  at::Tensor full_params();

 private:
  // The seq_len + 1 tokens of the step's j-th sequence (sequence_index order): files read in order
  // from the token position, synthetic or shuffled data by sequence index.
  std::vector<int64_t> step_window(int64_t j) const;
  // One micro step's rows; with --eos-id also each token's position within its document and the
  // documents' starts (else `positions` stays undefined and `docs` empty).
  void load_micro_batch(int64_t micro_step, at::Tensor* inputs, at::Tensor* labels, int64_t* first_position,
                        at::Tensor* positions = nullptr, DocStarts* docs = nullptr) const;
  int64_t count_valid_tokens() const;
  void all_reduce_grads();
  // The L2 norm of the global batch's gradient, every element counted once: at ZeRO 0 each rank
  // holds all of it (all-reduced), at ZeRO >= 1 each rank's owned chunks partition it (summed
  // over the world). Collective at ZeRO >= 1. Reads the gradients wherever they live (offloaded:
  // host memory).
  double global_grad_norm();
  // The optimizer (train_optimizer.cpp). grad_scale: the clipping factor min(1, clip / (norm +
  // 1e-6)), 1 without clipping.
  void adamw_step(double lr, double grad_scale);
  void master_adamw_step(double lr, double grad_scale);
  // LibTorch's fused AdamW over the owned chunks, one call per weight-decay group (decay_spans_).
  // Each list holds one tensor per ZeRO unit (the unit's owned chunk).
  void fused_adamw_by_group(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                            const std::vector<at::Tensor>& exp_avg, const std::vector<at::Tensor>& exp_avg_sq,
                            const at::Tensor& step, double lr);
  void copy_params_to_master();
  void all_gather_params();
  // Checkpoint and weight state (train_state.cpp).
  std::vector<at::Tensor> full_state();
  at::Tensor gathered_params();

  const RunOptions& options_;
  Comm& comm_;
  const TokenSource& data_;
  std::unique_ptr<Model> model_;
  at::Tensor exp_avg_, exp_avg_sq_;     // shard-shaped (the full layout at ZeRO 0)
  // fp32 master copy of the owned parameters: bf16 training, or the optimizer offloaded (then
  // host memory, with a persistent fp32 gradient buffer, and grad_partition_ where the grads are
  // not host memory already). Shard-shaped.
  at::Tensor master_, fp32_grads_, grad_partition_;
  std::vector<at::Tensor> host_state_;  // what state_blobs() points into (gathered at ZeRO >= 1)
  AdamWConfig adamw_;
  std::vector<std::vector<DecaySpan>> decay_spans_;  // per unit: the owned chunk by weight-decay group
  SdpaChoice sdpa_;
  int64_t steps_done_ = 0;
  int64_t next_sequence_ = 0;
  int64_t next_token_ = 0;
};

}  // namespace spplan::engine
