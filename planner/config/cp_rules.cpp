// The rules of the ring-attention degree cp (context parallelism) beside Ulysses' sp.
#include "planner/config/plan_rules.hpp"

#include "planner/core/parse.hpp"

namespace spplan {

std::vector<int64_t> valid_cp_degrees(int64_t num_gpus, int64_t sp) {
  std::vector<int64_t> out;
  if (sp < 1 || num_gpus % sp != 0) return out;
  for (int64_t r = 1; r <= num_gpus / sp; ++r) {
    if ((num_gpus / sp) % r == 0) out.push_back(r);
  }
  return out;
}

Status check_context_parallel(const PlanSpec& plan, const WhereFn& where) {
  const Knobs& k = plan.knobs;
  const int64_t n = plan.cluster.num_gpus;
  // Ring attention has no head rule: each rank keeps every head of its own tokens.
  if (k.cp < 1 || k.sp * k.cp > n || n % (k.sp * k.cp) != 0) {
    return Status::invalid(where("cp") + ": value " + std::to_string(k.cp) + " with sp " + std::to_string(k.sp) +
                           " does not divide " + std::to_string(n) + " GPUs into dp x sp x cp (allowed cp: " +
                           join_ints(valid_cp_degrees(n, k.sp)) + ")");
  }
  if (k.cp == 1) return Status::ok();
  // The zigzag split cuts each sequence into 2 x cp chunks after Ulysses' sp-way split of every
  // chunk's tokens; rank r of the ring takes chunks r and 2cp-1-r, so every ring rank gets the same
  // causal work (ring-flash-attention zigzag_ring_flash_attn; Megatron-LM's load-balanced CP). A
  // stack that cuts contiguous shards needs sp x cp equal ones (ring-flash-attn's llama3 variant
  // asserts the length divides by the ring's size).
  const bool contiguous = plan.stack.ring_contiguous_shards;
  const int64_t unit = (contiguous ? 1 : 2) * k.sp * k.cp;
  if (plan.seq_len % unit != 0) {
    return Status::invalid(where("seq_len") + ": value " + std::to_string(plan.seq_len) + " is not divisible by " +
                           (contiguous ? "" : "2 x ") + "sp x cp = " + std::to_string(unit) + " (the " +
                           (contiguous ? "contiguous" : "zigzag") + " split of ring attention; allowed: a multiple of " +
                           std::to_string(unit) + ")");
  }
  // ring-flash-attn's llama3 variant asserts its heads_k_stride divides the rank's key-value heads.
  const int64_t per_call = plan.stack.allgather_kv_heads_per_call;
  const int64_t kv_heads = plan.model.kv_heads_per_rank(k.sp);
  if (k.cp_comm == CpComm::kAllGather && per_call > 0 && kv_heads % per_call != 0) {
    return Status::invalid(where("cp_comm") + ": value \"allgather\" runs " + std::to_string(per_call) +
                           " key-value heads per call (trainer " + printable(plan.stack.trainer) +
                           "), which does not divide the " + std::to_string(kv_heads) +
                           " key-value heads of a rank (allowed: cp_comm \"ring\", or a trainer whose group divides them)");
  }
  return Status::ok();
}

}  // namespace spplan
