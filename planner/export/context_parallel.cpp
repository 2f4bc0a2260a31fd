// Exports of ring attention and the Ulysses x ring hybrid: Accelerate's context parallel (ring
// only) and Megatron-LM's context parallel arguments (every layout). What each format cannot
// express is in its trainer's record (configs/trainers, trainer_rules.hpp); the model's refusals
// for Megatron in megatron_model.cpp.
#include <sstream>

#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

std::string accelerate_cp_yaml(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const int64_t nodes = plan.cluster.num_nodes();
  Json j;
  j["compute_environment"] = "LOCAL_MACHINE";
  j["debug"] = false;
  j["distributed_type"] = "FSDP";
  j["downcast_bf16"] = "no";
  // The Trainer checkpoints (--gradient_checkpointing, its offload through
  // gradient_checkpointing_kwargs), not FSDP: transformers refuses both at once (5.24 trainer.py,
  // "can't both be set to True"), and TRL's SFTConfig turns gradient_checkpointing on by default.
  j["fsdp_config"] = {{"fsdp_activation_checkpointing", false},
                      {"fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
                      {"fsdp_cpu_ram_efficient_loading", true},
                      {"fsdp_offload_params", k.offload_params == OffloadDevice::kCpu},
                      {"fsdp_reshard_after_forward", k.zero_stage == 3},
                      {"fsdp_state_dict_type", "SHARDED_STATE_DICT"},
                      {"fsdp_version", 2}};
  j["machine_rank"] = 0;
  j["main_training_function"] = "main";
  if (nodes > 1) {
    j["main_process_ip"] = main_process_ip_placeholder();
    j["main_process_port"] = rdzv_port();
  }
  j["mixed_precision"] = k.precision == Precision::kBf16 ? "bf16" : "no";
  j["num_machines"] = nodes;
  j["num_processes"] = plan.cluster.num_gpus;
  // PyTorch's rotate methods: "alltoall" passes K/V chunks around the ring, "allgather" gathers them.
  j["parallelism_config"] = {{"parallelism_config_dp_replicate_size", 1},
                             {"parallelism_config_dp_shard_size", plan.dp()},
                             {"parallelism_config_tp_size", 1},
                             {"parallelism_config_cp_size", k.cp},
                             {"parallelism_config_cp_comm_strategy", k.cp_comm == CpComm::kRing ? "alltoall" : "allgather"}};
  j["rdzv_backend"] = nodes > 1 ? "c10d" : "static";
  j["same_network"] = true;
  j["use_cpu"] = false;
  std::string head = summary_text(plan, ExportFormat::kAccelerate);
  head += "# Ring attention through PyTorch's context_parallel on FSDP2 (ZeRO " + std::to_string(k.zero_stage) +
          "); the training script passes the batch through accelerator.maybe_context_parallel(...).\n";
  head += "# It runs through scaled_dot_product_attention: load the model with attn_implementation=\"sdpa\" (the plan\n"
          "# was priced with it).\n" + model_class_note(plan);
  if (nodes > 1) {
    head += std::string("# Placeholder: main_process_ip ") + main_process_ip_placeholder() +
            ": put the first node's address; on each node set machine_rank (0, 1, ...).\n";
  }
  head += "# Launch: accelerate launch --config_file THIS.yaml train.py FLAGS (on each node), FLAGS these\n"
          "# HF Trainer script flags (no --deepspeed: the optimizer is the Trainer's, sharded by FSDP2):\n#  " +
          hf_trainer_flags_with_checkpointing(plan) + "\n";
  head += sequence_note(plan);
  return yaml_text(head, j);
}

namespace {

// The context parallel arguments: Ulysses only is Megatron's a2a over sp ranks, ring only its p2p
// (or all_gather) over cp, the hybrid a2a+p2p over sp x cp with the a2a level on adjacent ranks
// first (--hierarchical-context-parallel-sizes: "every two adjacent gpus forms the first level").
std::string megatron_cp_args(const Knobs& k) {
  const int64_t size = k.sp * k.cp;
  if (size == 1) return "--context-parallel-size 1";
  std::string type;
  if (k.cp == 1) {
    type = "a2a";
  } else if (k.sp == 1) {
    type = k.cp_comm == CpComm::kRing ? "p2p" : "all_gather";
  } else {
    type = "a2a+p2p";
  }
  std::string out = "--context-parallel-size " + std::to_string(size) + " --cp-comm-type " + type;
  if (type == "a2a+p2p") {
    out += " --hierarchical-context-parallel-sizes " + std::to_string(k.sp) + " " + std::to_string(k.cp);
  }
  return out;
}

// ZeRO 1: the distributed optimizer; 2 and 3: Megatron-FSDP's sharding strategies.
std::string megatron_zero_args(const Knobs& k) {
  switch (k.zero_stage) {
    case 0: return "";
    case 1:
      return " --use-distributed-optimizer" +
             std::string(k.offload_optimizer == OffloadDevice::kCpu ? " --optimizer-cpu-offload --optimizer-offload-fraction 1.0" : "");
    case 2: return " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads";
    default: return " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params";
  }
}

const char* lr_decay_style(LrSchedule s) {
  switch (s) {
    case LrSchedule::kConstant: return "constant";
    case LrSchedule::kLinear: return "linear";
    case LrSchedule::kCosine: return "cosine";
  }
  return "constant";
}

}  // namespace

std::string megatron_script(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const OptimizerSpec& opt = plan.optimizer;
  const int64_t nodes = plan.cluster.num_nodes();
  const int64_t global_batch = k.micro_batch * k.grad_accum_steps * plan.dp();
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n" << summary_text(plan, ExportFormat::kMegatron);
  o << "# Megatron-LM's pretrain_gpt.py (context parallel needs Transformer Engine's attention). Placeholders:\n"
    << "# --mock-data and the NullTokenizer: put --data-path and your tokenizer; TRAIN_ITERS: the run's length.\n";
  if (k.sp > 1 && k.cp > 1) {
    o << "# Ulysses x ring: all-to-all over " << k.sp << " adjacent ranks, K/V passed point to point around "
      << k.cp << " ranks " << k.sp << " apart.\n";
  }
  if (nodes > 1) o << "# Run this on each node; MASTER_ADDR names the first node.\n";
  o << "set -euo pipefail\n" << megatron_release_guard(plan.model);
  o << (nodes > 1 ? ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n"
                  : "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n");
  o << "TRAIN_ITERS=\"${TRAIN_ITERS:-1000}\"\n";
  o << "export CUDA_DEVICE_MAX_CONNECTIONS=1\n" << alloc_conf_export();
  o << "torchrun --nnodes " << nodes << " --nproc-per-node " << plan.cluster.num_gpus / nodes
    << " --rdzv-backend c10d --rdzv-endpoint \"${MASTER_ADDR}:" << rdzv_port() << "\" pretrain_gpt.py "
    << megatron_model_args(plan) << " --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
    << megatron_cp_args(k) << " --micro-batch-size " << k.micro_batch << " --global-batch-size " << global_batch
    << (k.precision == Precision::kBf16 ? " --bf16" : "") << megatron_zero_args(k)
    << (k.act_ckpt == ActCkpt::kFull ? " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1" : "")
    << " --optimizer adam --lr " << format_number(opt.lr) << " --min-lr " << format_number(opt.min_lr)
    << " --lr-decay-style " << lr_decay_style(opt.lr_schedule) << " --lr-warmup-iters " << opt.warmup_steps
    << " --weight-decay " << format_number(opt.weight_decay) << " --clip-grad " << format_number(opt.grad_clip)
    << " " << adam_dash_flags(plan.optimizer) << " --train-iters \"${TRAIN_ITERS}\""
    << " --mock-data --tokenizer-type NullTokenizer --vocab-size " << plan.model.vocab_size << "\n";
  return o.str();
}

}  // namespace spplan::export_internal
