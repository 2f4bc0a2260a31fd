// Export: turns a checked plan into the files of the stack the user already runs, so the plan
// spplan ranked is the run they launch. Every value comes from the PlanSpec; nothing is re-derived.
//
//   deepspeed   ds_config.json: bf16, zero_optimization (stage, offload with pin_memory, the
//               /local_nvme placeholder for nvme, reduce/prefetch buckets from the knobs,
//               overlap_comm as DeepSpeed's default: on for stage 3 only), sequence_parallel_size,
//               seq_parallel_communication_data_type, batch sizes (train_batch_size left to DeepSpeed, which derives
//               micro_batch x grad_accum x dp), activation_checkpointing (cpu_checkpointing for
//               offload), AdamW with placeholder hyper-parameters. With optimizer offload DeepSpeed
//               runs AdamW as DeepSpeedCPUAdam on the host (said in the torchrun script's comments,
//               since JSON has none).
//   accelerate  an `accelerate launch --config_file` YAML: DEEPSPEED with deepspeed_config_file
//               ds_config.json (the user writes the deepspeed export there) and a parallelism_config
//               (parallelism_config_sp_backend: deepspeed, sp_size, dp_shard_size = dp). No
//               mixed_precision key: Accelerate rejects it next to a deepspeed_config_file; the
//               precision lives in the JSON.
//   arctic      an ArcticTraining `type: sft` recipe in the key names of its
//               projects/sequence-parallelism/run-*.yml (tiled loss -> model type liger).
//   torchrun    a bash script: one torchrun line per node with the plan's process counts.
//   megatron    a bash script: torchrun of Megatron-LM's pretrain_gpt.py with the model, the context
//               parallel arguments (Ulysses a2a, ring p2p / all_gather, or the hybrid a2a+p2p with
//               --hierarchical-context-parallel-sizes sp cp), ZeRO as Megatron's distributed
//               optimizer / Megatron-FSDP, recompute and the optimizer (context_parallel.cpp).
//   torchtitan  TorchTitan 0.2.2's TOML job config: its model flavour, FSDP2 over dp x cp, context
//               parallel, activation checkpointing, AdamW and its schedule (torchtitan.cpp).
//   swift       a bash script of ms-swift's `swift sft` with its sequence-parallel size, its named
//               DeepSpeed config and the Trainer's flags (swift.cpp).
//   axolotl     an Axolotl YAML: its ring (context_parallel_size, varlen_llama3, heads_k_stride),
//               the deepspeed export's config inline, TiledMLP's shard count, the Liger plugin for
//               the tiled loss and the Trainer's optimizer settings (axolotl.cpp).
//   trl         the YAML of `trl sft --config`: TRL's SFTConfig with the plan's length, padding
//               multiple, loss (chunked_nll for the tiled loss), checkpointing and its offload,
//               batch and optimizer, naming the accelerate export beside it (trl.cpp).
// Ring attention (cp > 1): Accelerate takes ring-only plans (parallelism_config cp_size on FSDP2);
// DeepSpeed, ArcticTraining and the HF Trainer have no ring attention and refuse them.
// YAML is written by hand (flat, two-space indent, strings quoted when needed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

enum class ExportFormat { kDeepSpeed, kAccelerate, kArctic, kTorchrun, kMegatron, kTorchtitan, kSwift, kAxolotl, kTrl };

// deepspeed, accelerate, arctic, torchrun, megatron, torchtitan, swift, axolotl, trl
const std::vector<std::string>& export_format_names();
std::string to_string(ExportFormat format);

// The format named `name`; unknown names are an error naming `where` (e.g. "--format"), the value
// and the allowed names.
Result<ExportFormat> parse_export_format(std::string_view name, const std::string& where = "format");

// The text of `format` for `plan` (ends with a newline). Fails with kInvalidInput when the plan
// breaks a rule of check_plan() or when its GPUs cannot be spread evenly over whole nodes
// (torchrun starts the same number of processes on every node). Messages name the plan-file key
// (`key "knobs.sp": ...`); callers prefix the file name. `plan_path`: the plan's file, which the
// torchrun script of a trainer "engine" plan runs (`spplan run --plan`); "" when the plan has no
// file (the script then asks for $PLAN).
Result<std::string> export_plan(const PlanSpec& plan, ExportFormat format, const std::string& plan_path = "");

}  // namespace spplan
