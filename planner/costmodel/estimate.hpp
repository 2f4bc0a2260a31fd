// estimate(): the analytical answer for one plan: peak memory per GPU (by category), host memory
// per node, step time with and without overlap, throughput, MFU and price, and whether it fits.
#pragma once

#include <string>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/step_costs.hpp"

namespace spplan::costmodel {

struct TimeBreakdown {
  double compute_s = 0;            // compute-stream work of the whole step
  double a2a_s = 0;                // Ulysses all-to-all, whole step
  double cp_comm_s = 0;            // ring-attention K/V traffic, whole step
  double zero_comm_s = 0;          // ZeRO gathers and reductions, whole step
  double offload_s = 0;            // checkpoint / parameter / gradient copies, whole step
  double optimizer_s = 0;          // optimizer phase (after the last backward)
  double exposed_a2a_s = 0;        // the part of each that the step waits for
  double exposed_cp_s = 0;         // ring hops that outlast their attention block, all-gathers
  double exposed_zero_s = 0;
  double exposed_offload_s = 0;
  double step_time_s = 0;          // with the overlap rules
  double serial_step_time_s = 0;   // no overlap: the sum of every operation
};

struct Estimate {
  MemoryBreakdown memory;          // per GPU at the peak
  double capacity_bytes = 0;       // device memory
  double usable_bytes = 0;         // what the plan may use of it: capacity less the headroom asked
  HostMemory host;                 // per node
  double host_capacity_bytes = 0;  // per node, usable: RAM less the OS reserve (software_facts.hpp)
  TimeBreakdown time;
  double tokens_per_step = 0;      // whole cluster
  double tokens_per_s = 0;         // whole cluster
  double model_flops_per_step = 0; // whole cluster, recompute included, causal attention
  double tflops_per_gpu = 0;
  double mfu = 0;                  // model FLOPs (no recompute) / (peak * time)
  double usd_per_million_tokens = 0;
  // Tokens/s less the padding (PlanSpec::documents; without documents every token is real), and one
  // epoch of the documents' sequences: optimizer steps (whole), seconds and price; 0 without them.
  double real_tokens_per_s = 0;
  double epoch_steps = 0;
  double epoch_s = 0;
  double usd_per_epoch = 0;
  // Attention priced per document (packed_attention.hpp prices_documents); false with documents
  // when the trainer's record does not say how it runs them: priced as one document a sequence.
  bool attention_per_document = false;
  bool fits = false;
  // kKernelIndexRange: the attention kernel cannot address a tensor this large (FlashAttention 2's
  // 32-bit offsets, software_facts.hpp), whatever memory is free.
  enum class Limit { kNone, kGpuMemory, kHostMemory, kKernelIndexRange };
  Limit limit = Limit::kNone;      // what it does not fit in
  // Elements of the attention kernel's largest per-GPU tensor (q, its output, dq's accumulator):
  // micro batch x local tokens x the query width, the same count before and after the all-to-all.
  double attention_tensor_elements = 0;

  // Device memory left free at the peak, % of the device (negative: short of it): against what the
  // step needs, the slack the allocator gives back when short not counted.
  double free_memory_pct() const {
    return capacity_bytes > 0 ? 100.0 * (capacity_bytes - memory.needed_bytes()) / capacity_bytes : 0;
  }

  // Need over have at the limit hit (1.25: 25% more than there is); 0 when it fits.
  double over_limit() const;

  // Why it does not fit ("" when it fits), e.g. "GPU memory: needs 81.2 GiB at loss backward,
  // has 79.6 GiB" (with a headroom: "has 71.6 GiB of 79.6 less the 10% headroom asked"). Formatted on demand: the search evaluates far more plans than it reports.
  std::string reason() const;
};

// REQUIRES: check_plan(plan) is ok.
Estimate estimate(const PlanSpec& plan);

// What a plan may use of `ram_gib` of a node's RAM: the rest is the OS's, the page cache's and the
// pinned-memory limit's (software_facts.hpp kHostReservedFraction, kHostReservedMinGiB).
double usable_host_bytes(double ram_gib);

}  // namespace spplan::costmodel
