// The measurements of `spplan calibrate`, on the device the engine runs on (a CUDA GPU or this
// CPU): each returns the (work, time) points of one kernel class, sized by a time budget
// (probe_budget.hpp's sweep), for kernel_fit.hpp to fit. On CUDA every call is timed between two
// device synchronizations, so the time is the kernel's, not its launch's.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "engine/measure/kernel_fit.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan::engine {

// How big and how long: CUDA sweeps larger sizes than a CPU, both stop at target_s per call.
struct ProbeScale {
  int64_t gemm_tokens_first = 64, gemm_tokens_last = 4096;
  int64_t attn_seq_first = 128, attn_seq_last = 4096;
  int64_t elementwise_first = 1 << 16, elementwise_last = 1 << 24;  // elements
  int64_t copy_first = 1 << 20, copy_last = 1 << 28;                // bytes
  int64_t adam_first = 1 << 20, adam_last = 1 << 24;                // parameters
  double target_s = 0.05;    // a size's first call at least this long ends the sweep (after 2 sizes)
  double reps_cap_s = 0.5;   // the further calls at one size take at most this long in all
  int reps = 3;              // further calls at one size (within reps_cap_s); each point is their median
  // The GEMMs' own: a step's GEMMs (gemm_samples) are timed from the size where they take about a
  // quarter of this to the size where they take this, so that the sweep covers the token counts
  // the engine's ranks run (a CPU's fp32 step mix rises from 50 GFLOP/s at 64 tokens to 117 at 512
  // and falls to about 100 at 4096 as the head's output outgrows the cache; a line through the small
  // sizes priced it 15-90 % fast on an AVX2 EPYC) on a device that runs the dtype at speed, and the first
  // sizes where it is emulated.
  double gemm_target_s = 0.05;
  // Attention's own: its rate rises with the sequence (a blockwise causal kernel computes whole
  // blocks on the diagonal: about s (s + B) / 2 scores for s^2 / 2 counted, B the block), so it is
  // measured up to the long sequences runs have, not stopped at the first call of target_s.
  double attn_target_s = 0.05, attn_reps_cap_s = 0.5;
  // The engine's layer on a CPU (calibrate_layer.hpp): tokens of its sequence; steps sized by the
  // attention's budget (a step is mostly attention and GEMMs).
  int64_t layer_tokens_first = 1024, layer_tokens_last = 8192;
};
ProbeScale cpu_scale();

// SPPLAN_CALIBRATE_CLOCK=cpu: a CPU's probes run on one thread and are timed on its CPU time, which
// other processes sharing the cores do not inflate: the per-thread rates on a busy machine, for
// comparing with runs timed by SPPLAN_ENGINE_KERNEL_CLOCK=cpu (one thread per rank).
bool calibrate_uses_thread_cpu_time();
ProbeScale cuda_scale();

// A model's GEMMs as one training step runs them (the engine's at::linear on [1, tokens, in]
// inputs): the forward x . W^T, or the backward as autograd runs it (the input gradient dY . W and
// the weight gradient X^T . dY of one torch::autograd::grad call: other layouts, and on some
// kernels other rates than the forward's, e.g. PyTorch's bf16 GEMM on a CPU without bf16 units,
// whose dY . W runs at a tenth of the forward's rate and on one thread on an AVX2 EPYC). Each sample is
// one call of every linear (QKV, O, MLP gate+up, down, LM head) at `tokens` tokens, their times
// summed in the step's proportions (each layer's linears num_hidden_layers times, the head once):
// the shapes' rates differ (that emulated bf16 backward runs the MLP's and the head's at 60 % of
// the projections'), and the costmodel prices the step's mix with one rate. Tokens double over the
// scale's range. Work: 2 (forward) or 4 (backward) * tokens * in * out FLOPs, summed likewise.
// Each sample is divided by the step's GEMM calls (4 layers + 1 head of tiny-llama: 17), so that
// the fit's intercept is one call's fixed cost, as the costmodel adds it to each GEMM
// (matmul_fixed_s), and its rate the mix's.
enum class GemmPass { kForward, kBackward };
std::vector<KernelSample> gemm_samples(const std::vector<ModelSpec>& models, c10::ScalarType dtype, GemmPass pass,
                                       c10::Device device, const ProbeScale& scale);

// The engine's attention (engine/model/attention.hpp: SDPA) over the sequence range with `heads`
// query and `kv_heads` KV heads of each of `head_dims`, its backward given a gradient of the
// output's own layout, causal (causal_attention) and not (full_attention: every query over every
// key, as a ring's off-diagonal blocks run). q, k and v are laid out as the engine's runs on the
// device hand them over: on a CPU as views of one packed [1, s, heads + 2 kv_heads, d] buffer, as
// the Ulysses exchange receives them (its multi-rank runs), where LibTorch's bf16 CPU flash backward
// runs 1.4x slower than on separate tensors (AMD EPYC Zen 3, one thread, 4K-8K tokens: 4.4-4.7
// against 6.3 GFLOP/s; fp32 alike either way); on a GPU as three tensors, as a one-GPU
// run (sp 1) has them. The causal calls size the sweep. Forward work: 4 h d FLOPs a pair (2
// matmuls of 2 d), s^2 pairs non-causal and s^2 / 2 counted causal; backward work: 2.5x the
// forward's, timed as (forward + backward) - forward. Each point is the median of its calls
// (ProbeTiming::median_s). Up to kBiasedSeqLast tokens also non-causal under an additive zero bias
// [s, s] (full_attention's bias: what the window's masked blocks run; the bias is s^2 elements).
inline constexpr int64_t kBiasedSeqLast = 8192;
struct AttentionSamples {
  std::vector<KernelSample> forward, backward;                // non-causal: every pair the kernel computes
  std::vector<ExcessSample> causal_forward, causal_backward;  // causal, for kernel_fit.hpp excess_units
  std::vector<ExcessSample> biased_forward, biased_backward;  // non-causal under a zero bias, up to kBiasedSeqLast
  std::vector<AttentionTimes> points;                         // each size's times (calibrate's table by length)
  std::string backend;  // the SDPA backend LibTorch chose: "flash", "memory-efficient", "cuDNN", "math"
};
AttentionSamples attention_samples(int64_t heads, int64_t kv_heads, const std::vector<int64_t>& head_dims,
                                   c10::ScalarType dtype, c10::Device device, const ProbeScale& scale);

// Large elementwise kernels, bytes read + written by one forward call of: the engine's RMSNorm,
// RoPE (HF's rotate-half recipe), SwiGLU (silu(gate) * up), the loss's fp32 upcast of the logits
// and a plain copy. `dtype`: the activations' (the upcast reads it and writes fp32).
struct NamedSamples {
  std::string what;
  std::vector<KernelSample> samples;
};
std::vector<NamedSamples> elementwise_samples(c10::ScalarType dtype, c10::Device device, const ProbeScale& scale);

// The mean time of one 1-element add, `calls` of them back to back (grown to the budget).
double launch_overhead_s(c10::Device device, std::string* what);

// Pinned host-to-device and device-to-host copies (on a CPU: one host copy), bytes per call.
std::vector<NamedSamples> copy_samples(c10::Device device, const ProbeScale& scale);

// LibTorch's fused AdamW on the host over n fp32 parameters (the optimizer offload's step).
std::vector<KernelSample> host_adam_samples(const ProbeScale& scale);

// CUDA only (0 elsewhere). The cuBLAS workspace: call first in the process, before any GEMM. The
// context: call last, after every kernel kind has been loaded.
double gemm_workspace_mib(c10::Device device, std::string* what);
double cuda_context_gib(c10::Device device, std::string* what);

// Name of sdp::SDPBackend's value: 0 math, 1 flash, 2 memory-efficient, 3 cuDNN.
std::string sdpa_backend_name(int64_t backend);

}  // namespace spplan::engine
