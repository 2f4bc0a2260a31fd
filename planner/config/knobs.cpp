#include "planner/config/knobs.hpp"

#include <algorithm>

#include "planner/config/plan_spec.hpp"

namespace spplan {

const std::vector<std::string>& offload_device_names() {
  static const std::vector<std::string> kNames{"none", "cpu", "nvme"};
  return kNames;
}
const std::vector<std::string>& act_ckpt_names() {
  static const std::vector<std::string> kNames{"none", "full", "offload"};
  return kNames;
}
const std::vector<std::string>& comm_dtype_names() {
  static const std::vector<std::string> kNames{"bf16", "fp32"};
  return kNames;
}
const std::vector<std::string>& cp_comm_names() {
  static const std::vector<std::string> kNames{"ring", "allgather"};
  return kNames;
}
const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> kNames{"bf16", "fp32"};
  return kNames;
}
const std::vector<std::string>& trainer_names() {
  static const std::vector<std::string> kNames{"arctic", "hf", "liger", "engine"};
  return kNames;
}
const std::vector<std::string>& attention_kernel_names() {
  static const std::vector<std::string> kNames{"flash2", "sdpa"};
  return kNames;
}

TrainingStack trainer_stack(size_t index) {
  TrainingStack stack;
  stack.trainer = trainer_names().at(index);
  // Hugging Face Trainer's training_step returns the loss only, so the logits are freed before
  // backward; so does the engine's Trainer::step (engine/run/train.cpp).
  stack.loop_holds_logits = stack.trainer == "arctic";
  // Liger's apply_liger_kernel patches RMSNorm, RoPE and SwiGLU besides the loss.
  stack.fused_layer_kernels = stack.trainer == "liger";
  if (stack.trainer == "hf" || stack.trainer == "liger") {
    // Hugging Face Trainer offloads checkpoints through DeepSpeed's context (max_fwd_stash_count 2
    // + keep_last_count 1, MEMORY-FACTS 8.1) and checkpoints non-reentrant (transformers 5.x).
    stack.offloaded_checkpoints_on_device = 3;
    stack.offloaded_checkpoints_only_while_running = false;
    stack.reentrant_checkpoint = false;
  }
  if (stack.trainer == "engine") {
    // Its ZeRO-3 frees every gathered unit right after its use, keeps no small parameters
    // gathered and gathers a unit when it runs, never ahead (engine/parallel/zero.hpp).
    stack.zero3_reuse_window_elems = 0.0;
    stack.zero3_persistence_threshold_elems = 0.0;
    stack.zero3_prefetches = false;
    // act_ckpt offload copies each layer input to the host inside the layer's forward and back
    // inside its backward: only the input of the running layer is on the device (model.cpp).
    stack.offloaded_checkpoints_on_device = 1;
    stack.tiled_mlp_fused_swiglu = true;
    stack.fused_layer_kernels_with_tiled_loss = true;  // its CUDA kernels come with --tiled-loss (model.cpp)
    stack.step_upcasts_whole_partition = true;         // one fp32 gradient buffer (train_optimizer.cpp)
    stack.fp32_norms_fused_on_gpu = true;              // at::rms_norm in fp32 (fused_kernels.cpp)
    // Its checkpoint (checkpointed_layer.cpp) recomputes the layer inside the layer's backward and
    // holds the recomputed output and the incoming gradient until torch::autograd::grad returns,
    // as the reentrant CheckpointFunction does: measured at the peak (issue 28).
    stack.reentrant_checkpoint = true;
    stack.attention = AttentionKernel::kSdpa;  // at::scaled_dot_product_attention (attention.cpp)
    stack.ulysses_one_exchange = true;            // q, k, v in one send buffer (ulysses.cpp)
    stack.rope_half_tables = true;                // cos, sin of [s, d/2] (rope.cpp)
    stack.reduces_after_backward = true;          // ZeRO 0/1: all_reduce_grads after the backward (train.cpp)
  }
  return stack;
}

TrainingStack trainer_stack(const std::string& name) {
  const auto& names = trainer_names();
  return trainer_stack(static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin()));
}

std::string to_string(Precision precision) { return precision_names()[static_cast<size_t>(precision)]; }
std::string to_string(CpComm comm) { return cp_comm_names()[static_cast<size_t>(comm)]; }
std::string to_string(OffloadDevice device) { return offload_device_names()[static_cast<size_t>(device)]; }
std::string to_string(ActCkpt mode) { return act_ckpt_names()[static_cast<size_t>(mode)]; }
std::string to_string(AttentionKernel kernel) { return attention_kernel_names()[static_cast<size_t>(kernel)]; }
std::string to_string(CommDtype dtype) { return comm_dtype_names()[static_cast<size_t>(dtype)]; }

}  // namespace spplan
