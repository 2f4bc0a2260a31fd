// ms-swift's `swift sft` command line (ms-swift 4.6.0: swift/arguments/sft_args.py, whose flags are
// transformers' TrainingArguments plus its own). ms-swift runs sequence parallel itself: it takes
// --sequence_parallel_size (sp x cp) and puts Ulysses over gcd(key-value heads, that size) ranks,
// a zigzag ring over the rest (the record's ulysses_degree rule keeps plans to that split). ZeRO
// comes as one of its named DeepSpeed configs (swift/config/zero*.json).
#include <sstream>

#include "planner/core/parse.hpp"
#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

// swift/config's name for the plan's ZeRO stage and offload (the format's refusals leave only these).
std::string deepspeed_name(const Knobs& k) {
  const bool offload = k.offload_optimizer == OffloadDevice::kCpu;
  return "zero" + std::to_string(k.zero_stage) + (offload ? "_offload" : "");
}

}  // namespace

std::string swift_script(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const int64_t nodes = plan.cluster.num_nodes(), per_node = plan.cluster.num_gpus / nodes;
  const int64_t ranks = k.sp * k.cp;
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n" << summary_text(plan, ExportFormat::kSwift);
  if (ranks > 1) {
    o << "# ms-swift splits --sequence_parallel_size " << ranks << " itself: Ulysses over gcd(" << plan.model.num_key_value_heads
      << " key-value heads, " << ranks << ") = " << k.sp << " ranks, a zigzag ring over " << k.cp
      << " (swift/sequence_parallel/sequence_parallel.py), as the plan was priced.\n";
  }
  o << "# Placeholders: MODEL (the model's folder or Hub id; the plan was priced for " << printable(plan.model.name)
    << "), DATASET" << (nodes > 1 ? ", MASTER_ADDR, and NODE_RANK on each node (0, 1, ...)" : "") << ".\n"
    << "set -euo pipefail\n"
    << "MODEL=${MODEL:?set MODEL to the model's folder or Hub id}\n"
    << "DATASET=${DATASET:?set DATASET to the training data}\n"
    << alloc_conf_export();
  o << "NPROC_PER_NODE=" << per_node << " NNODES=" << nodes;
  if (nodes > 1) o << " NODE_RANK=${NODE_RANK:?} MASTER_ADDR=${MASTER_ADDR:?} MASTER_PORT=" << rdzv_port();
  o << " swift sft \\\n  --model \"$MODEL\" \\\n  --dataset \"$DATASET\" \\\n  --tuner_type full \\\n"
    << "  --max_length " << plan.seq_len << " \\\n";
  if (plan.model.has_encoders()) {
    // A multimodal model's towers and projector, frozen or trained as the plan was priced
    // (TrainingStack::freezes_encoders; ms-swift freezes both by default in full training).
    const char* frozen = plan.stack.freezes_encoders ? "true" : "false";
    o << "  --freeze_vit " << frozen << " \\\n  --freeze_aligner " << frozen << " \\\n";
  }
  if (ranks > 1) o << "  --sequence_parallel_size " << ranks << " \\\n";
  if (k.cp > 1) o << "  --padding_free true \\\n";  // its ring runs on packed rows only (SequenceParallel.prepare)
  o << "  --attn_impl flash_attn \\\n  --deepspeed " << deepspeed_name(k) << " \\\n  --torch_dtype bfloat16 \\\n"
    // ms-swift checkpoints unless told not to (its gradient_checkpointing defaults to true).
    << "  --gradient_checkpointing " << (k.act_ckpt == ActCkpt::kFull ? "true" : "false") << " \\\n"
    << "  " << hf_trainer_flags_without_checkpointing(plan, /*valued_bools=*/true) << "\n";
  return o.str();
}

}  // namespace spplan::export_internal
