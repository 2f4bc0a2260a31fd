// PlanSpec: everything one evaluation needs: model + cluster + sequence length + knobs.
// What `plan --out` writes and `estimate`, `simulate`, `export` and `run` read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/config/optimizer_spec.hpp"

namespace spplan {

// Which causal attention kernel the stack runs. Its rate is a fact about the kernel on the GPU
// (GpuSpec), the choice a fact about the software: FlashAttention 2.x as a library (ALST's
// FlashAttention 2.7.4, transformers' attn_implementation="flash_attention_2"), or PyTorch's
// scaled_dot_product_attention, which picks cuDNN's kernel on Hopper in bf16 (LibTorch 2.5+).
enum class AttentionKernel { kFlash2, kSdpa };
const std::vector<std::string>& attention_kernel_names();  // "flash2", "sdpa"
std::string to_string(AttentionKernel kernel);

// What the training software does that changes memory or time and is not a knob. The defaults
// describe DeepSpeed under ArcticTraining, what ALST runs. `--trainer` (trainer_stack) picks
// another: Hugging Face Trainer / TRL on DeepSpeed ("hf"), the same with Liger-Kernel's fused
// layers ("liger"), or spplan-engine as `spplan run` runs the plan ("engine").
struct TrainingStack {
  std::string trainer = "arctic";  // the name it goes by (trainer_names), written to plan files
  // ZeRO-3 keeps a gathered parameter while it is reused within stage3_max_reuse_distance
  // elements and fewer than stage3_max_live_parameters are gathered (both 1e9), and parameters
  // below stage3_param_persistence_threshold (1e5) elements gathered always (DeepSpeed
  // zero/config.py, MEMORY-FACTS 1.1, 2.1, 2.2).
  double zero3_reuse_window_elems = 1e9;
  double zero3_persistence_threshold_elems = 1e5;
  // DeepSpeed's ZeRO-3 gathers up to stage3_prefetch_bucket_size elements ahead of use (the knob
  // prefetch_bucket_elems); a stack that gathers a unit only when it runs holds no prefetch.
  bool zero3_prefetches = true;
  // ArcticTraining's loop holds the model outputs (the logits) until backward returns
  // (MEMORY-FACTS 10.5); Hugging Face Trainer drops them before backward.
  bool loop_holds_logits = true;
  // With act_ckpt offload, how many layer inputs stay on the GPU. ArcticTraining's
  // CheckpointFunctionWithCPUOffload (arctic_training/monkey_patches.py) copies each input to the
  // host with a synchronous .to("cpu") inside the layer's forward and back inside its backward:
  // only the running layer's input is on the device. (DeepSpeed's own offload context,
  // offload_activations.py, keeps max_fwd_stash_count 2 + keep_last_count 1: the "hf" stacks.)
  int64_t offloaded_checkpoints_on_device = 1;
  // Whether those are inputs of running layers only (ArcticTraining's and the engine's copies, made
  // inside the layer's forward and backward: at the loss, where no layer runs, none is on the
  // device; issue 28 measured the engine's loss moment one checkpoint lower than priced), or kept
  // whether a layer runs or not (DeepSpeed's offload context, keep_last_count: the hf stacks).
  bool offloaded_checkpoints_only_while_running = true;
  // Activation checkpointing through torch.utils.checkpoint's reentrant CheckpointFunction:
  // transformers 4.x's gradient_checkpointing_enable() defaults to use_reentrant=True and
  // ArcticTraining calls it without arguments (hf_factory.py). Its backward holds the recomputed
  // layer output and the incoming gradient until the whole layer's backward returns.
  bool reentrant_checkpoint = true;
  AttentionKernel attention = AttentionKernel::kFlash2;
  // LibTorch's CPU flash kernel runs the attention (the engine on a CPU: engine/run/predict.cpp).
  // Its output is [b, s, heads, d] under a transposed view, so o_proj reads it without a copy, and
  // its backward accumulates dq, dk, dv in place in their own dtype with per-thread block buffers
  // only (aten/src/ATen/native/cpu/FlashAttentionKernel.cpp, cpu_flash_attention_backward): none
  // of FlashAttention-2's per-token fp32 dq accumulator, GQA-expanded dk/dv or softmax_d.
  bool cpu_flash_attention = false;
  // The threads of the process running that CPU kernel (at::get_num_threads()): its backward
  // allocates its block buffers for every thread of the pool at once (memory_activations.cpp
  // cpu_flash_backward_scratch_bytes). Read only with cpu_flash_attention; 0: the host's threads
  // over its ranks (costmodel/host_cpu.hpp as_priced sets it).
  int64_t cpu_flash_threads = 0;
  // The plan has been through costmodel::as_priced on a host CPU (its share of the machine taken):
  // pricing it again changes nothing.
  bool priced_on_host_cpu = false;
  // Liger-Kernel's Triton RMSNorm, RoPE and SwiGLU: one kernel per op and pass, reading and
  // writing each tensor once. Without them the layers run Hugging Face's eager modules, a chain of
  // PyTorch kernels per op (layer_kernels.hpp counts them).
  bool fused_layer_kernels = false;
  // The same one-kernel-per-op layer ops, but only with the tiled loss: the engine's --tiled-loss
  // brings its fused CUDA kernels (RMSNorm, q/k norm + RoPE, SwiGLU; engine/model/model.cpp) on a
  // GPU. On a CPU it runs their blockwise ATen references, which engine/run/predict.cpp prices as
  // the eager chain by turning this off. Measured on an H100 (2026-11-26, qwen3-0.6b 16K): priced
  // as the eager chain, the step read +42.7 %.
  bool fused_layer_kernels_with_tiled_loss = false;
  // The optimizer step on the device upcasts the rank's whole gradient partition into one fp32
  // buffer (the engine: train_optimizer.cpp master_adamw_step, the bf16 gradients stay where they
  // are), where DeepSpeed flattens one sub-group's gradients and makes their fp32 copy
  // (MEMORY-FACTS 2.4). Measured on an H100 (2026-11-26, qwen3-0.6b 16K, tiled loss): the peak at the
  // step was the states plus 2.29 GiB, the partition's fp32 gradients being 2.22 GiB.
  bool step_upcasts_whole_partition = false;
  // fp32 training normalises the layers with LibTorch's rms_norm (the engine: fused_kernels.cpp
  // rms_normalize), which on CUDA runs its fused kernel under autograd (aten::_fused_rms_norm,
  // PyTorch PR 153666): it saves the input and the reciprocal RMS, not the normalised value the
  // eager chain keeps. On a CPU the op is the composite, which keeps it (the engine's fp32 CPU cases
  // measured that count within 0.3 %); engine/run/predict.cpp turns this off there. Measured on an
  // H100 (2026-11-26, qwen3-0.6b fp32 4K, no checkpointing): the eager count was 0.89 GiB high,
  // two h-wide fp32 tensors a token a layer.
  bool fp32_norms_fused_on_gpu = false;
  // Whether TiledMLP's shards keep the fused SwiGLU that comes with the tiled loss (the engine:
  // tiling.cpp mlp_options; its gradients overwrite the saved gate|up in place) or run the eager
  // one (ArcticTraining turns Liger's SwiGLU off under TiledMLP, liger_factory.py).
  bool tiled_mlp_fused_swiglu = false;
  // Ulysses' backward all-to-all of dq, dk, dv. DeepSpeed exchanges q, k and v each on its own
  // (MEMORY-FACTS 8.3), so its backward exchanges one gradient at a time; the engine exchanges the
  // three in one buffer (engine/parallel/ulysses.cpp QkvToHeads). memory_activations.cpp prices both.
  bool ulysses_one_exchange = false;
  // RoPE's cos and sin as [s, d/2] tables (engine/model/rope.cpp: each half of a head is rotated by
  // the same angles), where Hugging Face's rotary embedding repeats them to [s, d]: half the bytes.
  bool rope_half_tables = false;
  // Below ZeRO 2, the gradients are reduced after the backward, bucket by bucket, each through a
  // converted copy freed at once when the reduction dtype differs (engine/run/train.cpp
  // all_reduce_grads). DeepSpeed keeps its IPG bucket allocated and reduces during the backward
  // (memory_buffers.cpp reduce_buffer_bytes).
  bool reduces_after_backward = false;
};

// The training loops spplan knows by name: "arctic" (ArcticTraining, the default), "hf", "liger",
// "engine".
const std::vector<std::string>& trainer_names();
// The stack of trainer_names()[index] (knobs.cpp says how each differs from "arctic").
TrainingStack trainer_stack(size_t index);
// The stack by name; REQUIRES: name is one of trainer_names().
TrainingStack trainer_stack(const std::string& name);

struct PlanSpec {
  ModelSpec model;
  ClusterSpec cluster;
  int64_t seq_len = 0;  // tokens per sequence (global, before SP sharding)
  Knobs knobs;
  OptimizerSpec optimizer;  // [optimizer]: optional in files (absent: the defaults)
  // The [optimizer] keys the plan file gave: what a --resume holds against the checkpoint's
  // settings (the others are taken from the checkpoint).
  std::vector<std::string> optimizer_keys_in_file;
  TrainingStack stack;
  // Documents packed into each sequence, positions restarting and attention masked at their ends
  // (the engine's --eos-id; not a plan-file key): the costmodel prices the position ids.
  bool packed_documents = false;

  // Data-parallel degree: GPUs = dp x sp x cp.
  int64_t dp() const { return cluster.num_gpus / (knobs.sp * knobs.cp); }
};

}  // namespace spplan
