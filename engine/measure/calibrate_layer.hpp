// The elementwise kernel class measured the way the engine runs it (CPU only).
//
// The costmodel prices a step's elementwise class (layer_kernels.hpp: the RMSNorms, RoPE, SwiGLU
// and residual adds, forward and backward, and the embedding) as the bytes it counts over one rate.
// Probing each kernel alone at a round size misses what the engine's layer adds to them: autograd's
// backward of the stacked QKV split and of RoPE's halves (a zero fill, a copy and an add per view),
// the accumulation into the gradient buffer, transcendental kernels (SiLU) that a CPU core runs
// compute-bound, and tensors of the model's widths rather than of a 1.7B model's. Measured on an
// AVX2 AMD EPYC, one thread, tiny-llama at 4K tokens (SPPLAN_ENGINE_KERNEL_CLOCK=cpu): the class
// took 0.204 s a step, the separate kernels' pooled rate priced it at 0.078 s.
//
// So calibrate runs one decoder layer of the model through the engine's own Model (embedding, one
// layer, head and loss, forward and backward, act_ckpt none, in the given precision, the gradient
// buffer zeroed as a step does), times every op with the kernel clock (kernel_clock.hpp) and keeps
// the elementwise class's seconds: each sample is (the bytes elementwise_work counts for that plan,
// the median of its calls' class seconds), over sequences doubling from the scale's first. Once
// per precision: per byte the costmodel counts, a bf16 class need not run at the fp32 class's rate
// (a CPU without bf16 units converts every element; a 2-vCPU AVX2 AMD EPYC Zen 3: 9.2-10.5
// against 10.6-14.1 GB/s).
#pragma once

#include <vector>

#include "engine/measure/calibrate_probes.hpp"
#include "engine/measure/kernel_fit.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

// Sequences double from scale.layer_tokens_first to scale.layer_tokens_last, stopping after the
// first step of at least scale.attn_target_s once two sizes are timed; each size is timed 1 + reps
// times (reps cut short once their sum passes scale.attn_reps_cap_s). Work: bytes.
// An error when the costmodel is not built in (no bytes to divide by).
struct LayerSamples {
  std::vector<KernelSample> samples;
  int64_t last_tokens = 0;  // the longest sequence timed
};
Result<LayerSamples> layer_elementwise_samples(const ModelSpec& model, const ProbeScale& scale, Precision precision);

}  // namespace spplan::engine
