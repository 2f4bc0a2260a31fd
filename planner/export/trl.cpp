// TRL's own launch: the YAML `trl sft --config` reads, SFTConfig's fields (with ModelConfig's and
// ScriptArguments') set to what the plan was priced with. Read from trl 1.14.2 (PyPI wheel):
// scripts/utils.py TrlParser.parse_args_and_config makes the file's values the parsers' defaults
// (the command line still overrides them) and hands a key no dataclass has, accelerate_config, to
// `accelerate launch`, where cli/accelerate_config.py turns a path into --config_file. The
// processes, DeepSpeed's Ulysses or FSDP2's context parallel stay in the accelerate export, which
// this file names, so each fact is written once.
#include <string>

#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kAccelerateConfigFile = "accelerate.yaml";
constexpr const char* kDatasetPlaceholder = "trl-lib/Capybara";  // the data set of trl's own scripts/sft.py usage

// A mixture's load-balancing loss as the plan priced it: transformers adds it when the model
// config's output_router_logits is true, which model_init_kwargs sets through from_pretrained; TRL
// weighs it by its own router_aux_loss_coef (trl 1.14 sft_config.py; None keeps the config's).
void mixture_fields(const ModelSpec& m, Json* j) {
  if (!m.is_moe() || m.router_sigmoid) return;  // GLM-4.5's model computes no such loss
  (*j)["model_init_kwargs"] = {{"output_router_logits", m.output_router_logits}};
  if (m.output_router_logits) (*j)["router_aux_loss_coef"] = m.router_aux_loss_coef;
}

std::string trl_head(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  std::string head = summary_text(plan, ExportFormat::kTrl);
  head += std::string("# Write `spplan export --format accelerate` of the same plan to ") + kAccelerateConfigFile +
          (k.cp == 1 ? " and `--format deepspeed` to ds_config.json" : "") +
          " beside this file:\n# the processes and the " +
          (k.sp > 1   ? "DeepSpeed Ulysses"
           : k.cp > 1 ? "FSDP2 context parallel"
                      : "DeepSpeed ZeRO") +
          " settings live there.\n";
  head += "# Launch, in that folder (on each node): trl sft --config THIS.yaml\n";
  head += "# Placeholders: model_name_or_path (a Hub id or a local model folder), dataset_name (a Hub data set or a\n"
          "# local folder of JSON Lines).\n";
  head += k.tiled_loss ? "# loss_type chunked_nll: TRL's loss, lm_head and cross-entropy in chunks of " +
                             std::to_string(plan.stack.tiled_loss_chunk_tokens) +
                             " tokens, recomputed in the\n# backward (the plan's tiled loss).\n"
                       : std::string("# loss_type nll: the full logits, as the plan priced them (TRL's default is chunked_nll: "
                                     "re-plan with\n# --tiled-loss for it).\n");
  if (k.sp > 1) head += "# Under Ulysses TRL's collator adds the position_ids DeepSpeed shards with the tokens.\n";
  if (k.cp > 1) head += "# No packing under the ring: TRL refuses it with cp_size > 1.\n";
  return head;
}

}  // namespace

std::string trl_yaml(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  Json j;
  j["model_name_or_path"] = plan.model.name;
  j["dataset_name"] = kDatasetPlaceholder;
  j["accelerate_config"] = kAccelerateConfigFile;
  j["attn_implementation"] = attn_implementation_name(plan);
  // SFTConfig loads the weights in fp32 unless dtype is given (trl 1.14 create_model_from_path).
  j["dtype"] = k.precision == Precision::kBf16 ? "bfloat16" : "float32";
  j["max_length"] = plan.seq_len;
  if (const int64_t multiple = sequence_padding_multiple(plan); multiple > 1) j["pad_to_multiple_of"] = multiple;
  // One document a sequence, as the plan prices attention over the whole sequence.
  j["packing"] = false;
  j["padding_free"] = false;
  j["loss_type"] = k.tiled_loss ? "chunked_nll" : "nll";
  const Json trainer_arguments = hf_trainer_argument_values(plan);
  for (const auto& [key, value] : trainer_arguments.items()) j[key] = value;
  // SFTConfig turns bf16 on unless fp16 (trl 1.14 base_config.py), where the Trainer's default is off.
  if (k.precision != Precision::kBf16) j["bf16"] = false;
  mixture_fields(plan.model, &j);
  return yaml_text(trl_head(plan), j);
}

}  // namespace spplan::export_internal
