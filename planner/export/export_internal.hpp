// Internal to planner/export: what export.cpp shares with context_parallel.cpp (the ring-attention
// exports), so each format's text is written once.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"
#include "planner/export/export.hpp"

namespace spplan::export_internal {

// From export.cpp.
std::string summary_text(const PlanSpec& plan, ExportFormat format);  // the "# spplan export" line
std::string yaml_text(const std::string& head, const nlohmann::ordered_json& body);
nlohmann::ordered_json deepspeed_config(const PlanSpec& plan);  // what --format deepspeed writes
// transformers' lr_scheduler_type for the plan's schedule, and the warm-up steps the exports write.
std::string hf_lr_scheduler_name(const OptimizerSpec& optimizer);
int64_t hf_warmup_steps(const OptimizerSpec& optimizer);
const char* attn_implementation_name(const PlanSpec& plan);  // transformers' attn_implementation
// "# train.py loads it through AutoModelForImageTextToText ..." for a model AutoModelForCausalLM does
// not build (ModelSpec::causal_lm_class); "" for every other.
std::string model_class_note(const PlanSpec& plan);
std::string engine_optimizer_flags(const OptimizerSpec& optimizer);  // --lr ... for spplan run
// The HF Trainer's script flags, checkpointing included (--gradient_checkpointing true or false, and
// its offload): for a run on FSDP2, whose YAML leaves checkpointing to the Trainer.
std::string hf_trainer_flags_with_checkpointing(const PlanSpec& plan);
// The sequence length, the padding multiple and the batch fields the plan's split needs of train.py.
std::string sequence_note(const PlanSpec& plan);
// What every sequence is padded to a multiple of: sp for Ulysses, 2 x cp for the ring's head-tail
// chunks, their least common multiple for both; 1 without a split.
int64_t sequence_padding_multiple(const PlanSpec& plan);
// The HF Trainer's arguments the plan fixes (batch, optimizer, schedule, precision, checkpointing
// and its offload, Liger), in TrainingArguments' names, in the order the flags are written.
nlohmann::ordered_json hf_trainer_argument_values(const PlanSpec& plan);
// Without the checkpointing flags: for ms-swift, whose own --gradient_checkpointing line says it.
// `valued_bools`: " --bf16 true" where transformers writes " --bf16" (ms-swift declares its bool
// flags Optional[bool]).
std::string hf_trainer_flags_without_checkpointing(const PlanSpec& plan, bool valued_bools = false);
int rdzv_port();
std::string alloc_conf_export();  // the script line that turns expandable segments on unless the user chose
// "--adam-beta1 B1 --adam-beta2 B2 --adam-eps E": the plan's AdamW as Megatron-LM's and the engine's flags name it.
std::string adam_dash_flags(const OptimizerSpec& o);
const char* main_process_ip_placeholder();

// From context_parallel.cpp. Accelerate on FSDP2 with parallelism_config cp_size (REQUIRES: cp > 1, sp == 1).
std::string accelerate_cp_yaml(const PlanSpec& plan);
// Megatron-LM's pretrain_gpt.py under torchrun.
std::string megatron_script(const PlanSpec& plan);

// From swift.cpp: ms-swift's `swift sft` script. REQUIRES: the plan passes check_plan.
std::string swift_script(const PlanSpec& plan);

// From axolotl.cpp: Axolotl's YAML. REQUIRES: the plan passes check_plan.
std::string axolotl_yaml(const PlanSpec& plan);

// From trl.cpp: the `trl sft --config` YAML of TRL's SFTConfig. REQUIRES: the plan passes check_plan.
std::string trl_yaml(const PlanSpec& plan);

// From torchtitan.cpp. REQUIRES: the plan passes check_plan (its model is one TorchTitan builds).
std::string torchtitan_toml(const PlanSpec& plan);

// From megatron_model.cpp. What pretrain_gpt.py's arguments cannot say about the model (a
// fractional rope_theta; dynamic RoPE scaling; llama3 scaling other than Llama 3.1's; a fractional
// linear factor; a YaRN attention_factor of its own), as one line naming the plan-file key.
Status check_megatron_model(const ModelSpec& model);
// "--num-layers 32 ... --untie-embeddings-and-output-weights": the architecture, RoPE and norms.
// REQUIRES: check_megatron_model(plan.model) is ok.
std::string megatron_model_args(const PlanSpec& plan);
// Bash lines that stop the script under a Megatron-LM release older than its RoPE scaling needs
// (linear and yarn: core_r0.19); "" when any release from core_r0.13 on runs the model.
std::string megatron_release_guard(const ModelSpec& model);

}  // namespace spplan::export_internal
