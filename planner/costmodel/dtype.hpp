// Bytes per element under the plan's precision (internal to the costmodel).
#pragma once

#include "planner/config/plan_spec.hpp"
#include "planner/core/units.hpp"

namespace spplan::costmodel {

// Weights, activations and gradients: bf16 under mixed precision, fp32 otherwise.
inline double act_bytes(const PlanSpec& p) { return p.knobs.precision == Precision::kBf16 ? kBf16Bytes : kFp32Bytes; }
// fp32 master copy kept by mixed precision only (plain fp32 updates the weights in place).
inline double master_bytes(const PlanSpec& p) { return p.knobs.precision == Precision::kBf16 ? kFp32Bytes : 0.0; }
// Adam exp_avg + exp_avg_sq, fp32.
inline constexpr double kAdamStateBytes = 2 * kFp32Bytes;
// Bytes per element of the ZeRO gradient reduction: under SP > 1 DeepSpeed uses
// seq_parallel_communication_data_type; otherwise the model dtype (MEMORY-FACTS 1.3).
inline double grad_comm_bytes(const PlanSpec& p) {
  if (p.knobs.sp > 1) return p.knobs.sp_comm_dtype == CommDtype::kFp32 ? kFp32Bytes : kBf16Bytes;
  return act_bytes(p);
}
// Extra fp32 copy a bf16 op makes when it upcasts (RMSNorm, loss); none when already fp32.
inline double upcast_bytes(const PlanSpec& p) { return p.knobs.precision == Precision::kBf16 ? kFp32Bytes : 0.0; }
// The untiled loss's cross-entropy: on fp32 logits after transformers' upcast (ForCausalLMLoss:
// logits.float()), or on the logits in their own dtype where the stack's loss under sequence
// parallel skips it (TrainingStack::sp_loss_in_logits_dtype). Its element bytes, and the upcast's.
inline bool loss_in_logits_dtype(const PlanSpec& p) {
  return p.stack.sp_loss_in_logits_dtype && p.knobs.sp * p.knobs.cp > 1;
}
inline double cross_entropy_bytes(const PlanSpec& p) { return loss_in_logits_dtype(p) ? act_bytes(p) : kFp32Bytes; }
inline double loss_upcast_bytes(const PlanSpec& p) { return loss_in_logits_dtype(p) ? 0.0 : upcast_bytes(p); }

}  // namespace spplan::costmodel
