// The analytical estimate: memory (memory_phases), time (step_costs under the overlap rules
// below), throughput, FLOPs, MFU and price.
//
// Overlap rules (what DeepSpeed + Ulysses run concurrently):
//  1. Ulysses all-to-alls are synchronous: the layer waits for them (never hidden).
//  1b. Ring-attention hops overlap the attention block computed meanwhile; only a hop's excess
//      over its block, the all-gather variant and the backward's last dK/dV hop are exposed.
//  2. ZeRO-3 all-gathers (and the H2D fetch of offloaded params) are prefetched on a side stream
//     and hide behind the previous layer's compute; only the excess is exposed.
//  3. Gradient reductions run on a side stream behind the next layer's backward, queued
//     behind that layer's gather on the same links: every micro step at ZeRO 2/3, only in the
//     last micro step of an accumulation at ZeRO 0/1 (DeepSpeed reduces at the boundary).
//  4. Checkpoint offload copies run on copy engines behind the same layer's compute.
//  5. The optimizer phase (grad D2H, Adam, param H2D, ZeRO-1/2 all-gather) runs after the last
//     backward, alone.
#include "planner/costmodel/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/packed_attention.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

// One layer in one pass: compute + all-to-all, or the slower side stream when it is longer.
struct LayerPassTime {
  double step_s = 0, exposed_zero_s = 0, exposed_offload_s = 0;
};

LayerPassTime layer_pass_time(const LayerPassCosts& pass, double zero_s, double offload_s) {
  const double critical = pass.total_s();
  LayerPassTime t;
  t.exposed_zero_s = std::max(0.0, zero_s - critical);
  t.exposed_offload_s = std::max(0.0, offload_s - critical);
  t.step_s = critical + std::max(t.exposed_zero_s, t.exposed_offload_s);
  return t;
}

// One micro step's wall time and exposed ZeRO / offload time, with or without gradient reductions.
struct MicroStepTime {
  double step_s = 0, exposed_zero_s = 0, exposed_offload_s = 0;
};

MicroStepTime micro_step_time(const StepCosts& c, bool reduces) {
  const bool recompute = c.recompute.compute_s() > 0;
  const double gather = c.param_gather_s + c.param_fetch_h2d_s;
  const double reduce = reduces ? c.grad_reduce_s : 0.0;
  const LayerPassTime fwd = layer_pass_time(c.forward, gather, c.ckpt_d2h_s);
  const LayerPassTime rec = recompute ? layer_pass_time(c.recompute, gather, c.ckpt_h2d_s) : LayerPassTime{};
  // Gathers and reduce-scatters share the links, so in backward they queue behind each other.
  const LayerPassTime bwd = layer_pass_time(c.backward, gather + reduce, 0.0);
  // The embedding / head gathers and reductions are exposed (nothing to hide behind at the ends).
  const double ends_zero = 3.0 * c.embed_gather_s + (reduces ? c.embed_grad_reduce_s : 0.0);
  MicroStepTime t;
  t.exposed_zero_s = c.layers * (fwd.exposed_zero_s + rec.exposed_zero_s + bwd.exposed_zero_s) + ends_zero;
  t.exposed_offload_s = c.layers * (fwd.exposed_offload_s + rec.exposed_offload_s);
  t.step_s = c.layers * (fwd.step_s + rec.step_s + bwd.step_s) + c.embed_fwd_s + c.embed_bwd_s + c.loss_fwd_s +
             c.loss_bwd_s + ends_zero;
  return t;
}

TimeBreakdown time_breakdown(const StepCosts& c) {
  const MicroStepTime reducing = micro_step_time(c, true), accumulating = micro_step_time(c, false);
  const double m = static_cast<double>(c.micro_steps), r = static_cast<double>(c.reducing_micro_steps);
  TimeBreakdown t;
  t.compute_s = m * c.micro_step_compute_s();
  t.a2a_s = m * c.micro_step_a2a_s();
  t.cp_comm_s = m * c.micro_step_cp_comm_s();
  t.exposed_cp_s = m * c.micro_step_cp_exposed_s();
  t.zero_comm_s = c.step_zero_comm_s();
  t.offload_s = m * c.micro_step_offload_s() + c.grad_d2h_s + c.param_h2d_s;
  t.optimizer_s = c.optimizer_phase_s();
  t.exposed_a2a_s = t.a2a_s;
  t.exposed_zero_s = r * reducing.exposed_zero_s + (m - r) * accumulating.exposed_zero_s + c.param_allgather_s;
  t.exposed_offload_s = m * reducing.exposed_offload_s + c.grad_d2h_s + c.param_h2d_s;
  t.step_time_s = r * reducing.step_s + (m - r) * accumulating.step_s + c.optimizer_phase_s();
  t.serial_step_time_s = c.serial_s();
  return t;
}

// FLOPs the whole cluster executes per step, recompute included (matmuls 2 per MAC, causal
// attention counted as executed: half the square of each document, backward 2x the forward as the model FLOPs
// convention counts it). `with_recompute` false gives the MFU numerator.
double model_flops_per_step(const PlanSpec& p, bool with_recompute) {
  const ParamCounts c = param_counts(p.model);
  const double sequences = static_cast<double>(p.dp()) * p.knobs.micro_batch * p.knobs.grad_accum_steps;
  const double s = static_cast<double>(p.seq_len);
  // A mixture's token runs through its k experts and the router only (ParamCounts::mlp_active).
  const double matmul_params = c.layers_active + c.embedding;  // + lm_head
  const double dense_fwd = 2.0 * matmul_params * s;
  // Attention over the sequence's documents when it holds several (packed_attention.hpp).
  const double heads = static_cast<double>(p.model.num_attention_heads), d = static_cast<double>(p.model.head_dim);
  const double attention_fwd = p.model.num_hidden_layers * mean_over_attention_layers(p.model, [&](double window) {
                                 return attention_pairs_fwd_flops(sequence_causal_pairs(p, s, window), heads, d, 1.0);
                               });
  const bool recompute = with_recompute && p.knobs.act_ckpt != ActCkpt::kNone;
  const double passes = 3.0 + (recompute ? 1.0 : 0.0);  // fwd + bwd (2x) + recompute
  return sequences * passes * (dense_fwd + attention_fwd);
}

// Over the plan's documents: the real tokens' share of the step's, and an epoch of their sequences
// (whole steps: the last one runs at full length, padded or not).
void set_epoch(const PlanSpec& p, double usd_per_s, Estimate* e) {
  e->attention_per_document = prices_documents(p);
  if (p.documents.empty()) {
    e->real_tokens_per_s = e->tokens_per_s;
    return;
  }
  const double seqs = static_cast<double>(p.documents.sequences);
  e->real_tokens_per_s = e->tokens_per_s * p.documents.real_tokens() / (seqs * static_cast<double>(p.seq_len));
  e->epoch_steps = std::ceil(seqs * static_cast<double>(p.seq_len) / e->tokens_per_step);
  e->epoch_s = e->epoch_steps * e->time.step_time_s;
  e->usd_per_epoch = e->epoch_s * usd_per_s;
}

// "GPU memory: needs 81.2 GiB at loss backward, has 79.6 GiB" (snprintf: this runs per rejected plan).
std::string shortfall(const char* what, double need_bytes, const std::string& where, double have_bytes) {
  char text[160];
  std::snprintf(text, sizeof text, "%s: needs %.1f GiB%s%s, has %.1f GiB", what, need_bytes / kGiB,
                where.empty() ? "" : " at ", where.c_str(), have_bytes / kGiB);
  return text;
}

}  // namespace

Estimate estimate(const PlanSpec& p) {
  if (needs_host_pricing(p)) return estimate(as_priced(p));  // a host CPU: each rank's share of it (host_cpu.hpp)
  Estimate e;
  e.memory = peak_memory(p);
  e.capacity_bytes = p.cluster.gpu.memory_gib * kGiB;
  e.usable_bytes = e.capacity_bytes * (1.0 - p.memory_headroom);
  e.host = host_memory(p);
  e.host_capacity_bytes = usable_host_bytes(p.cluster.gpu.host_memory_gib_per_node);
  e.time = time_breakdown(step_costs(p));

  const double sequences = static_cast<double>(p.dp()) * p.knobs.micro_batch * p.knobs.grad_accum_steps;
  e.tokens_per_step = sequences * static_cast<double>(p.seq_len);
  e.tokens_per_s = e.tokens_per_step / e.time.step_time_s;
  e.model_flops_per_step = model_flops_per_step(p, true);
  const double gpus = static_cast<double>(p.cluster.num_gpus);
  e.tflops_per_gpu = e.model_flops_per_step / (e.time.step_time_s * gpus) / kTera;
  e.mfu = model_flops_per_step(p, false) / (e.time.step_time_s * gpus * p.cluster.gpu.bf16_tflops * kTera);
  const double usd_per_s = gpus * p.cluster.gpu.price_per_gpu_hour / kSecondsPerHour;
  e.usd_per_million_tokens = usd_per_s / e.tokens_per_s * 1e6;
  set_epoch(p, usd_per_s, &e);

  e.attention_tensor_elements = local_tokens(p) * static_cast<double>(p.model.q_dim());
  const double need = e.memory.needed_bytes();
  if (need > e.usable_bytes) {
    e.limit = Estimate::Limit::kGpuMemory;
  } else if (e.host.total_bytes() > e.host_capacity_bytes) {
    e.limit = Estimate::Limit::kHostMemory;
  } else if (p.stack.attention == AttentionKernel::kFlash2 && e.attention_tensor_elements > facts::kFlash2MaxTensorElements) {
    e.limit = Estimate::Limit::kKernelIndexRange;
  }
  e.fits = e.limit == Estimate::Limit::kNone;
  return e;
}

double usable_host_bytes(double ram_gib) {
  const double reserved_gib = std::min(ram_gib, std::max(facts::kHostReservedMinGiB, facts::kHostReservedFraction * ram_gib));
  return (ram_gib - reserved_gib) * kGiB;
}

double Estimate::over_limit() const {
  switch (limit) {
    case Limit::kNone: return 0;
    case Limit::kGpuMemory: return memory.needed_bytes() / capacity_bytes;
    case Limit::kHostMemory: return host.total_bytes() / host_capacity_bytes;
    case Limit::kKernelIndexRange: return attention_tensor_elements / facts::kFlash2MaxTensorElements;
  }
  return 0;
}

std::string Estimate::reason() const {
  switch (limit) {
    case Limit::kNone: return "";
    case Limit::kGpuMemory:
      return shortfall("GPU memory", memory.needed_bytes(), memory.peak_phase, usable_bytes) +
             (usable_bytes < capacity_bytes ? format_number(" of %.1f less the ", capacity_bytes / kGiB) +
                                                  format_number("%.3g", 100 * (1 - usable_bytes / capacity_bytes)) +
                                                  "% headroom asked"
                                            : std::string());
    case Limit::kHostMemory:
      return shortfall("host memory per node", host.total_bytes(), "", host_capacity_bytes) +
             " usable (the rest is left to the OS, page cache and pinned-memory limits)";
    case Limit::kKernelIndexRange:
      return "FlashAttention 2 indexes in 32 bits: its q tensor holds " + format_number("%.3g", attention_tensor_elements) +
             " elements per GPU, more than 2^31 (more sp or cp shortens it; flash3 and sdpa index in 64 bits)";
  }
  return "";
}

}  // namespace spplan::costmodel
