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
  // causal work (ring-flash-attention zigzag_ring_flash_attn; Megatron-LM's load-balanced CP).
  const int64_t unit = 2 * k.sp * k.cp;
  if (plan.seq_len % unit != 0) {
    return Status::invalid(where("seq_len") + ": value " + std::to_string(plan.seq_len) +
                           " is not divisible by 2 x sp x cp = " + std::to_string(unit) +
                           " (the zigzag split of ring attention; allowed: a multiple of " + std::to_string(unit) + ")");
  }
  return Status::ok();
}

// Accelerate's context parallel runs on FSDP2 (accelerate parallelism_config.py: cp needs FSDP2),
// whose sharding is ZeRO-2 (reshard_after_forward false) or ZeRO-3 and whose CPU offload moves
// parameters, gradients and optimizer state together (CPUOffloadPolicy); its ParallelismConfig
// refuses cp_size with sp_size (1.15.0).
Status check_accelerate_context_parallel(const PlanSpec& plan, const WhereFn& where) {
  const Knobs& k = plan.knobs;
  if (k.cp == 1) return Status::ok();
  if (k.sp > 1) {
    return Status::invalid(where("cp") + ": value " + std::to_string(k.cp) + " with sp " + std::to_string(k.sp) +
                           " is not run by Accelerate's context parallel (its ParallelismConfig refuses cp_size and "
                           "sp_size together) (allowed: sp 1 for ring only; Ulysses x ring runs with --trainer engine "
                           "or --format megatron)");
  }
  if (k.zero_stage < 2) {
    return Status::invalid(where("zero_stage") + ": value " + std::to_string(k.zero_stage) + " with cp " +
                           std::to_string(k.cp) + " is not run by Accelerate's context parallel (it runs on FSDP2, "
                           "which shards gradients and optimizer state at least) (allowed: 2, 3)");
  }
  const bool both_cpu = k.offload_optimizer == OffloadDevice::kCpu && k.offload_params == OffloadDevice::kCpu;
  const bool none = k.offload_optimizer == OffloadDevice::kNone && k.offload_params == OffloadDevice::kNone;
  if (!both_cpu && !none) {
    return Status::invalid(where("offload_optimizer") + ": value \"" + to_string(k.offload_optimizer) +
                           "\" with offload_params \"" + to_string(k.offload_params) + "\" and cp " +
                           std::to_string(k.cp) + " is not run by Accelerate's FSDP2 (its CPU offload moves parameters, "
                           "gradients and optimizer state together) (allowed: both none, or both cpu)");
  }
  return Status::ok();
}

Status check_trainer_context_parallel(const PlanSpec& plan, const WhereFn& where) {
  const std::string& trainer = plan.stack.trainer;
  if (plan.knobs.cp == 1) return Status::ok();
  // ArcticTraining's sequence parallelism is DeepSpeed's UlyssesSPAttentionHF: heads only, no ring.
  if (trainer == "arctic") {
    return Status::invalid(where("cp") + ": value " + std::to_string(plan.knobs.cp) +
                           " is not run by trainer \"arctic\" (ArcticTraining has Ulysses only, no ring attention; "
                           "allowed: 1; ring and Ulysses x ring plans: --trainer engine; ring only: --trainer hf or liger)");
  }
  // The Hugging Face Trainer takes ring attention through Accelerate's parallelism_config.
  if (trainer == "hf" || trainer == "liger") return check_accelerate_context_parallel(plan, where);
  return Status::ok();
}

}  // namespace spplan
