// The memory-bound kernels of one decoder layer and of the unfused loss: the bytes they move and
// how many kernels they launch, counted pass by pass as the software runs them. Hugging Face's
// eager modules (what ArcticTraining, HF Trainer and spplan-engine run) are chains of PyTorch
// kernels, each reading and writing a whole tensor, with fp32 upcasts inside RMSNorm; Liger-Kernel
// fuses each of RMSNorm, RoPE and SwiGLU into one kernel per pass (TrainingStack::
// fused_layer_kernels). On an H100 the eager chain moves 10-30x the bytes of the fused kernels
// (eager RMSNorm forward+backward at 86-234 GB/s of "one read, one write" in
// ../shared/validation/gpu_h100_kernels.jsonl), which is where small steps spend their time.
#pragma once

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// Bytes moved per token and kernels launched by one pass over one layer (or over the loss).
struct KernelTraffic {
  double bytes_per_token = 0;
  double kernels = 0;
  KernelTraffic& operator+=(const KernelTraffic& o) {
    bytes_per_token += o.bytes_per_token;
    kernels += o.kernels;
    return *this;
  }
};

// Whether the layer's RMSNorms are LibTorch's fused rms_norm (the stack's fp32 norms on a GPU,
// TrainingStack::fp32_norms_fused_on_gpu): one kernel a pass, and no normalised value saved. The
// one rule for the traffic here and the saved bytes in memory_activations.cpp.
inline bool fp32_norms_fused(const PlanSpec& p) {
  return p.stack.fp32_norms_fused_on_gpu && p.knobs.precision == Precision::kFp32;
}

// The layer's RMSNorms (and Qwen3's q/k norms), RoPE on q and k, SwiGLU's activation and product,
// and the two residual adds, in the forward (also each recompute) and in the backward.
KernelTraffic layer_elementwise_fwd(const PlanSpec& plan);
KernelTraffic layer_elementwise_bwd(const PlanSpec& plan);

// The cross-entropy over bf16/fp32 logits as PyTorch runs it unfused: the upcast, log_softmax,
// nll and their backward, per token (vocab entries per token included). Not used with tiled_loss.
KernelTraffic unfused_loss_fwd(const PlanSpec& plan);
KernelTraffic unfused_loss_bwd(const PlanSpec& plan);

}  // namespace spplan::costmodel
