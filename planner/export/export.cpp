#include "planner/export/export.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/utf8_text.hpp"
#include "planner/export/export_internal.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the order written

constexpr const char* kDsConfigFile = "ds_config.json";
constexpr const char* kNvmePath = "/local_nvme";  // placeholder: a local NVMe mount on every node
// transformers' attn_implementation for the plan's kernel (fp32 plans run SDPA: plan_rules.hpp).
const char* attn_implementation(const PlanSpec& plan) {
  switch (plan.stack.attention) {
    case AttentionKernel::kFlash2: return "flash_attention_2";
    case AttentionKernel::kFlash3: return "flash_attention_3";
    case AttentionKernel::kSdpa: return "sdpa";
    case AttentionKernel::kFlex: return "flex_attention";
  }
  return "sdpa";
}
constexpr int kRdzvPort = 29500;
constexpr const char* kMainProcessIp = "MAIN_NODE_IP";  // placeholder: the first node's address

int64_t whole(double elems) { return static_cast<int64_t>(std::llround(elems)); }

Json offload_json(OffloadDevice device) {
  Json j{{"device", to_string(device)}, {"pin_memory", true}};
  if (device == OffloadDevice::kNvme) j["nvme_path"] = kNvmePath;
  return j;
}

// The zero_optimization section; DeepSpeed and ArcticTraining's deepspeed: block share it.
Json zero_json(const Knobs& k) {
  Json z{{"stage", k.zero_stage},
         {"overlap_comm", k.zero_stage == 3},  // DeepSpeed's default, which the memory model assumes
         {"contiguous_gradients", true},
         {"reduce_bucket_size", whole(k.reduce_bucket_elems)}};
  if (k.zero_stage == 3) z["stage3_prefetch_bucket_size"] = whole(k.prefetch_bucket_elems);
  if (k.offload_optimizer != OffloadDevice::kNone) z["offload_optimizer"] = offload_json(k.offload_optimizer);
  if (k.offload_params != OffloadDevice::kNone) z["offload_param"] = offload_json(k.offload_params);
  return z;
}

// DeepSpeed's scheduler for the plan's schedule (deepspeed/runtime/lr_schedules.py): WarmupLR
// (warm-up, then constant), WarmupDecayLR (linear), WarmupCosineLR (cosine, in ratios of the
// optimizer's lr). Their warm-ups start at warmup_min_lr = 0 and run linearly, as the engine's;
// WarmupDecayLR's warm-up starts at its floor, so linear with min_lr > 0 starts there, not at 0.
// Each holds warmup_num_steps at 2 or more. total_num_steps is the plan's train_steps; a plan
// without one writes "auto", which only the Hugging Face Trainer / Accelerate path fills (from
// max_steps): plain `deepspeed` needs the number (`spplan plan --train-steps K`, and
// `spplan export` warns when it is missing). A constant schedule without warm-up needs no scheduler.
Json scheduler_json(const OptimizerSpec& o) {
  const int64_t warmup = std::max<int64_t>(1, o.warmup_steps);  // exported_warmup_steps: at least 1 with a scheduler
  const Json total = o.train_steps > 0 ? Json(o.train_steps) : Json("auto");
  switch (o.lr_schedule) {
    case LrSchedule::kConstant:
      if (o.warmup_steps == 0) return Json();
      return {{"type", "WarmupLR"},
              {"params", {{"warmup_min_lr", 0.0}, {"warmup_max_lr", o.lr}, {"warmup_num_steps", warmup},
                          {"warmup_type", "linear"}}}};
    case LrSchedule::kLinear:
      return {{"type", "WarmupDecayLR"},
              {"params", {{"total_num_steps", total}, {"warmup_min_lr", o.min_lr}, {"warmup_max_lr", o.lr},
                          {"warmup_num_steps", warmup}, {"warmup_type", "linear"}}}};
    case LrSchedule::kCosine:
      return {{"type", "WarmupCosineLR"},
              {"params", {{"total_num_steps", total}, {"warmup_min_ratio", 0.0}, {"warmup_num_steps", warmup},
                          {"cos_min_ratio", o.min_lr / o.lr}, {"warmup_type", "linear"}}}};
  }
  return Json();
}

Json deepspeed_json(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  Json j;
  j["bf16"] = {{"enabled", k.precision == Precision::kBf16}};
  // No train_batch_size: DeepSpeed derives it as micro batch x accumulation x (world / sp) = dp,
  // while transformers' start-up check computes world x micro batch x accumulation, counting the
  // sp ranks as data parallel, and refuses the plan's value whenever sp > 1 (found by
  // tests/scripts/export_check_test.py with transformers' own HfTrainerDeepSpeedConfig).
  j["train_micro_batch_size_per_gpu"] = k.micro_batch;
  j["gradient_accumulation_steps"] = k.grad_accum_steps;
  j["sequence_parallel_size"] = k.sp;
  j["seq_parallel_communication_data_type"] = to_string(k.sp_comm_dtype);
  j["zero_optimization"] = zero_json(k);
  if (k.act_ckpt != ActCkpt::kNone) {
    j["activation_checkpointing"] = {{"partition_activations", false},
                                     {"cpu_checkpointing", k.act_ckpt == ActCkpt::kOffload},
                                     {"contiguous_memory_optimization", false},
                                     {"synchronize_checkpoint_boundary", false}};
  }
  const OptimizerSpec& o = plan.optimizer;
  j["optimizer"] = {{"type", "AdamW"},
                    {"params", {{"lr", o.lr}, {"betas", {o.adam_beta1, o.adam_beta2}}, {"eps", o.adam_eps}, {"weight_decay", o.weight_decay}}}};
  if (Json sched = scheduler_json(o); !sched.is_null()) j["scheduler"] = sched;
  j["gradient_clipping"] = o.grad_clip;  // 0 is DeepSpeed's "no clipping", as the engine's
  j["steps_per_print"] = 10;
  j["wall_clock_breakdown"] = false;
  return j;
}

// A float as YAML text that reads back as the same double: decimal where 12 places hold it exactly
// (0.00001), else scientific with a dot and a signed exponent ("1.0e-15"), the one exponent form
// YAML 1.1's float pattern takes (PyYAML reads "1e-05" as a string). Decimal alone wrote an epsilon
// of 1e-15 as 0.0.
std::string yaml_float(double x) {
  std::ostringstream fixed;
  fixed << std::fixed << std::setprecision(12) << x;
  std::string s = fixed.str();
  while (s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  if (std::strtod(s.c_str(), nullptr) == x || !std::isfinite(x)) return s;
  char buffer[64];  // the shortest scientific text that reads back as x ("1e-15"), then its dot
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  std::string t(buffer, written.ptr);
  if (t.find('.') == std::string::npos) t.insert(t.find('e'), ".0");
  return t;
}

// YAML scalars: plain when unambiguous, else a JSON string (valid YAML double-quoted).
std::string yaml_scalar(const Json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/');
    for (char c : s) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string("_-./").find(c) != std::string::npos);
    for (const char* word : {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}) plain = plain && s != word;
    return plain ? s : v.dump();
  }
  if (v.is_number_float()) return yaml_float(v.get<double>());
  return v.dump();  // integers, booleans, null
}

void emit_yaml(std::ostringstream& o, const Json& j, int indent) {
  const std::string pad(indent, ' ');
  for (const auto& [key, v] : j.items()) {
    o << pad << key << ":";
    if (v.is_object()) {
      o << "\n";
      emit_yaml(o, v, indent + 2);
    } else if (v.is_array()) {
      o << "\n";
      for (const Json& e : v) {
        if (!e.is_object()) {
          o << pad << "  - " << yaml_scalar(e) << "\n";
          continue;
        }
        // A mapping in a list: its first key after the dash, the others under it.
        std::ostringstream item;
        emit_yaml(item, e, indent + 4);
        const std::string text = item.str();
        o << pad << "  - " << (text.size() > static_cast<size_t>(indent + 4) ? text.substr(indent + 4) : text);
      }
    } else {
      o << " " << yaml_scalar(v) << "\n";
    }
  }
}

// The warm-up the exports write: the plan's, but at least 1 where a scheduler runs. transformers
// 5.18+ fills DeepSpeed's warmup_num_steps with max(1, warmup) and refuses a ds_config that says 0
// ("ds scheduler.params.warmup_num_steps=0 vs hf warmup_steps=1"), and DeepSpeed 0.19.3+ refuses
// values below 1; its schedules hold a warm-up of at least 2 steps internally anyway, so nothing
// trains differently. A constant rate without warm-up has no scheduler and keeps 0.
int64_t exported_warmup_steps(const OptimizerSpec& o) {
  const bool scheduler = o.lr_schedule != LrSchedule::kConstant || o.warmup_steps > 0;
  return scheduler ? std::max<int64_t>(1, o.warmup_steps) : o.warmup_steps;
}

// What the user's train.py must do with its sequences for the plan's split. DeepSpeed's Ulysses
// refuses a sequence that does not divide by sp (deepspeed 0.18.9 ulysses_sp.py) and shards the
// position ids with the tokens, so every batch carries them (huggingface/trl#6812); torch's context
// parallel cuts a sequence into 2 x cp chunks for its head-tail balance (torch _context_parallel
// _HeadTailLoadBalancer; TRL's docs: "the sequence has to divide cp_size * 2") and runs no packing
// (trl 1.13+ refuses packing under cp). TRL's SFTConfig names each (max_length, pad_to_multiple_of).
int64_t sequence_multiple(const Knobs& k) { return std::lcm(k.sp, k.cp > 1 ? 2 * k.cp : int64_t{1}); }

std::string sequence_text(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  const int64_t multiple = sequence_multiple(k);
  std::string note = "# train.py trains sequences of " + std::to_string(plan.seq_len) + " tokens (TRL: --max_length " +
                     std::to_string(plan.seq_len) + ")";
  if (multiple > 1) {
    note += ", each padded to a multiple of " + std::to_string(multiple) + " (TRL: --pad_to_multiple_of " +
            std::to_string(multiple) + ")";
  }
  note += ".\n";
  if (k.sp > 1) note += "# Under Ulysses every batch carries position_ids, which DeepSpeed shards with the tokens (huggingface/trl#6812).\n";
  if (k.cp > 1) note += "# Under the ring the documents are not packed (TRL refuses packing under cp: --packing false).\n";
  return note;
}

// The HF Trainer arguments that match the DeepSpeed config, in TrainingArguments' names (TRL's
// SFTConfig inherits them): with --deepspeed, transformers fills the config's "auto" values from
// TrainingArguments and refuses a value that differs from its own argument
// (integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_process): batch sizes,
// accumulation, AdamW's lr, betas, eps and weight decay, the warm-up, clipping and bf16.
// Checkpointing: gradient_checkpointing (non-reentrant in transformers 5.x), its offload through
// gradient_checkpointing_kwargs (transformers 5.17+: save_on_cpu around each checkpoint), and false
// for a plan without it, since TRL's SFTConfig checkpoints by default (trl 1.14 base_config.py).
// `checkpointing`: false where the launcher's own flag says it (ms-swift's).
Json hf_trainer_arguments(const PlanSpec& plan, bool checkpointing) {
  const OptimizerSpec& o = plan.optimizer;
  const Knobs& k = plan.knobs;
  Json a;
  a["per_device_train_batch_size"] = k.micro_batch;
  a["gradient_accumulation_steps"] = k.grad_accum_steps;
  a["learning_rate"] = o.lr;
  a["adam_beta1"] = o.adam_beta1;
  a["adam_beta2"] = o.adam_beta2;
  a["adam_epsilon"] = o.adam_eps;
  a["weight_decay"] = o.weight_decay;
  a["lr_scheduler_type"] = export_internal::hf_lr_scheduler_name(o);
  a["warmup_steps"] = exported_warmup_steps(o);
  a["max_grad_norm"] = o.grad_clip;
  // The run's length: transformers fills total_num_steps from it and refuses a written one that differs.
  if (o.train_steps > 0) a["max_steps"] = o.train_steps;
  if (k.precision == Precision::kBf16) a["bf16"] = true;
  if (checkpointing) a["gradient_checkpointing"] = k.act_ckpt != ActCkpt::kNone;
  if (checkpointing && k.act_ckpt == ActCkpt::kOffload) a["gradient_checkpointing_kwargs"] = {{"offload", true}};
  // Liger-Kernel: --use_liger_kernel applies apply_liger_kernel_to_*'s defaults, the fused RMSNorm,
  // RoPE and SwiGLU with the fused linear cross-entropy (the "liger" record, whose plans tile the
  // loss); the flag picks no subset (liger_kernel_config is a dict no flag fills), so plans without
  // Liger have none.
  if (plan.stack.fused_layer_kernels) a["use_liger_kernel"] = true;
  return a;
}

// One argument as transformers' HfArgumentParser reads it: a true bool as the bare flag (or with
// its value, `valued_bools`, for a parser that declares it Optional[bool]: ms-swift's), a dict as
// JSON in single quotes, a float as format_number writes it (the flags' text before this list).
std::string flag_text(const std::string& key, const Json& v, bool valued_bools) {
  std::string text = " --" + key;
  if (v.is_boolean()) return text + (v.get<bool>() ? (valued_bools ? " true" : "") : " false");
  if (v.is_number_float()) return text + " " + format_number(v.get<double>());
  if (v.is_string()) return text + " " + v.get<std::string>();
  if (v.is_object()) {
    std::string dict;
    for (const auto& [name, value] : v.items()) dict += (dict.empty() ? "" : ", ") + Json(name).dump() + ": " + value.dump();
    return text + " '{" + dict + "}'";
  }
  return text + " " + v.dump();
}

std::string hf_trainer_flags(const PlanSpec& plan, bool checkpointing = true, bool valued_bools = false) {
  const Json arguments = hf_trainer_arguments(plan, checkpointing);
  std::string flags;
  for (const auto& [key, v] : arguments.items()) flags += flag_text(key, v, valued_bools);
  return flags.substr(1);
}

// transformers registers Ulysses only through Accelerate's ParallelismConfig; under torchrun (no
// accelerate launch) the Accelerator reads it from these variables (accelerate 1.15
// utils/dataclasses.py, state.py). The attention implementation must be the model's (DeepSpeed
// refuses None) and may be overridden where flash-attn is missing; the data-parallel shard size is
// the plan's dp (else DeepSpeed's batch-size check fails: train_batch_size != micro x accum x world).
std::string ulysses_environment(const PlanSpec& plan) {
  if (plan.knobs.sp == 1) return "";
  std::ostringstream o;
  o << "export ACCELERATE_USE_PARALLELISM_CONFIG=true\n"
    << "export PARALLELISM_CONFIG_DP_REPLICATE_SIZE=1\n"
    << "export PARALLELISM_CONFIG_DP_SHARD_SIZE=" << plan.dp() << "\n"
    << "export PARALLELISM_CONFIG_TP_SIZE=1\n"
    << "export PARALLELISM_CONFIG_SP_SIZE=" << plan.knobs.sp << "\n"
    << "export PARALLELISM_CONFIG_SP_BACKEND=deepspeed\n"
    << "export PARALLELISM_CONFIG_SP_SEQ_LENGTH_IS_VARIABLE=true\n"
    << "export PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION=\"${PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION:-"
    << attn_implementation(plan) << "}\"\n";
  return o.str();
}

// What a training script must name to build a model AutoModelForCausalLM does not build, and how
// it freezes the encoders where the plan was priced with them frozen (transformers 5.24's
// Gemma3ForConditionalGeneration and Mistral3ForConditionalGeneration name them so).
std::string model_class_lines(const PlanSpec& plan) {
  std::string lines;
  if (!plan.model.causal_lm_class) {
    lines += "# train.py loads it through AutoModelForImageTextToText: transformers maps this multimodal config to no\n"
             "# causal-LM class, so AutoModelForCausalLM refuses it.\n";
  }
  if (plan.encoders_frozen()) {
    lines += "# train.py freezes the encoders before the Trainer builds its optimizer, as the plan was priced (weights\n"
             "# only): model.model.vision_tower.requires_grad_(False), model.model.multi_modal_projector.requires_grad_(False).\n";
  }
  return lines;
}

// How the user's train.py must load the model for what the plan priced: the attention kernel
// (under Ulysses the environment above also names it), its class and a mixture's load-balancing loss.
std::string model_load_note(const PlanSpec& plan) {
  std::string note = std::string("# train.py loads the model with attn_implementation=\"") + attn_implementation(plan) +
                     "\" (the kernel this plan is priced with";
  if (plan.model.attention_sinks) note += "; the one that trains its attention sinks";
  note += ").\n" + model_class_lines(plan);
  // A mixture's load-balancing loss is the model config's (transformers adds it when the config's
  // output_router_logits is true), not a Trainer flag: the plan priced what its config.json said.
  const ModelSpec& m = plan.model;
  if (m.is_moe() && !m.router_sigmoid) {  // GLM-4.5's model computes no such loss (Glm4MoeForCausalLM)
    note += m.output_router_logits
                ? "# ... and output_router_logits=True, router_aux_loss_coef=" + format_number(m.router_aux_loss_coef) +
                      " (the load-balancing loss this plan prices: every layer's router logits kept to the loss).\n"
                : "# ... and output_router_logits=False (no load-balancing loss is priced; True keeps every layer's router "
                  "logits to the loss: re-plan with it set in the model's config.json).\n";
  }
  return note;
}

// The /local_nvme placeholder, said where a comment can say it (JSON has none: `spplan export`
// warns on stderr for the deepspeed format).
std::string nvme_note(const Knobs& k) {
  if (k.offload_optimizer != OffloadDevice::kNvme && k.offload_params != OffloadDevice::kNvme) return "";
  return std::string("# Placeholder: nvme_path ") + kNvmePath + " in ds_config.json: put a local NVMe mount of every node.\n";
}

std::string summary(const PlanSpec& plan, ExportFormat format) {
  const Knobs& k = plan.knobs;
  std::ostringstream o;
  // printable(): a newline in a name would end the comment and run the rest as a shell command.
  o << "# spplan export (" << to_string(format) << "): " << printable(plan.model.name) << " on "
    << plan.cluster.num_gpus << " x " << printable(plan.cluster.gpu.name) << " (" << plan.cluster.num_nodes()
    << " node" << (plan.cluster.num_nodes() > 1 ? "s" : "") << "), seq_len " << plan.seq_len << ", sp " << k.sp
    << (k.cp > 1 ? ", cp " + std::to_string(k.cp) + " (" + to_string(k.cp_comm) + ")" : std::string()) << ", dp " << plan.dp() << ", ZeRO " << k.zero_stage
    << ", offload optimizer " << to_string(k.offload_optimizer) << " / params " << to_string(k.offload_params)
    << ", act_ckpt " << to_string(k.act_ckpt) << (k.tiled_mlp ? ", tiled MLP" : "") << (k.tiled_loss ? ", tiled loss" : "")
    << "\n";
  // A config file cannot set the allocator's variable; the scripts set it (alloc_conf_export).
  const bool config_file = format == ExportFormat::kAccelerate || format == ExportFormat::kArctic ||
                           format == ExportFormat::kAxolotl || format == ExportFormat::kTorchtitan ||
                           format == ExportFormat::kTrl;
  if (config_file) {
    o << "# Launch with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the memory was priced with the caching\n"
      << "# allocator's expandable segments (without them it strands split segments near the limit).\n";
  }
  return o.str();
}

std::string with_yaml(std::string head, const Json& body) {
  std::ostringstream o;
  o << head;
  emit_yaml(o, body, 0);
  return o.str();
}

std::string accelerate_yaml(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  Json j;
  j["compute_environment"] = "LOCAL_MACHINE";
  j["debug"] = false;
  j["deepspeed_config"] = {{"deepspeed_config_file", kDsConfigFile}, {"zero3_init_flag", k.zero_stage == 3}};
  // `accelerate launch` on each node (what the comment below asks): the standard launcher. Without
  // it Accelerate starts DeepSpeed's pdsh launcher (its default) with --hostfile None.
  if (plan.cluster.num_nodes() > 1) j["deepspeed_config"]["deepspeed_multinode_launcher"] = "standard";
  j["distributed_type"] = "DEEPSPEED";
  j["machine_rank"] = 0;
  j["main_training_function"] = "main";
  if (plan.cluster.num_nodes() > 1) {
    j["main_process_ip"] = kMainProcessIp;
    j["main_process_port"] = kRdzvPort;
  }
  j["num_machines"] = plan.cluster.num_nodes();
  j["num_processes"] = plan.cluster.num_gpus;
  j["parallelism_config"] = {{"parallelism_config_dp_replicate_size", 1},
                             {"parallelism_config_dp_shard_size", plan.dp()},
                             {"parallelism_config_tp_size", 1},
                             {"parallelism_config_sp_size", k.sp},
                             {"parallelism_config_sp_backend", "deepspeed"},
                             {"parallelism_config_sp_seq_length_is_variable", true},
                             {"parallelism_config_sp_attn_implementation", attn_implementation(plan)}};
  j["rdzv_backend"] = plan.cluster.num_nodes() > 1 ? "c10d" : "static";
  j["same_network"] = true;
  j["use_cpu"] = false;
  std::string head = summary(plan, ExportFormat::kAccelerate);
  head += std::string("# Write `spplan export --format deepspeed` of the same plan to ") + kDsConfigFile +
          " next to this file;\n# precision, ZeRO, batch sizes and the optimizer (lr, schedule, weight decay, gradient\n"
          "# clipping) live there (so no mixed_precision key here).\n";
  if (plan.cluster.num_nodes() > 1) {
    head += std::string("# Placeholder: main_process_ip ") + kMainProcessIp +
            ": put the first node's address; on each node set machine_rank (0, 1, ...).\n";
  }
  head += nvme_note(k);
  head += "# Launch: accelerate launch --config_file THIS.yaml train.py FLAGS (on each node), FLAGS these\n"
          "# HF Trainer script flags (transformers refuses a DeepSpeed value that differs from its own argument):\n#  " +
          hf_trainer_flags(plan) + "\n";
  head += sequence_text(plan);
  head += model_load_note(plan);
  return with_yaml(head, j);
}

std::string arctic_yaml(const PlanSpec& plan) {
  const Knobs& k = plan.knobs;
  Json j;
  j["type"] = "sft";
  j["micro_batch_size"] = k.micro_batch;
  j["gradient_accumulation_steps"] = k.grad_accum_steps;
  j["sequence_parallel_size"] = k.sp;
  j["activation_checkpoint_cpu_offload"] = k.act_ckpt == ActCkpt::kOffload;
  j["tiled_mlp_compute"] = k.tiled_mlp;
  j["deepspeed"] = {{"zero_optimization", zero_json(k)},
                    {"seq_parallel_communication_data_type", to_string(k.sp_comm_dtype)}};
  j["optimizer"] = Json::object();
  if (k.offload_optimizer != OffloadDevice::kNone) j["optimizer"]["type"] = "cpu_adam";
  const OptimizerSpec& o = plan.optimizer;
  j["optimizer"]["learning_rate"] = o.lr;
  j["optimizer"]["weight_decay"] = o.weight_decay;
  j["optimizer"]["betas"] = {o.adam_beta1, o.adam_beta2};  // eps: FusedAdam's 1e-8 (check_arctic_optimizer)
  // ArcticTraining's "huggingface" scheduler is transformers' get_scheduler by name; its warm-up
  // is a ratio of the run: warmup_steps / train_steps when the plan knows its length (train_iters),
  // else 0 and a comment below.
  const double warmup_ratio = o.train_steps > 0 ? static_cast<double>(o.warmup_steps) / static_cast<double>(o.train_steps) : 0.0;
  j["scheduler"] = {{"type", "huggingface"},
                    {"name", o.lr_schedule == LrSchedule::kConstant ? "constant_with_warmup" : to_string(o.lr_schedule)},
                    {"warmup_ratio", warmup_ratio}};
  if (o.train_steps > 0) j["train_iters"] = o.train_steps;
  j["deepspeed"]["gradient_clipping"] = o.grad_clip;
  j["model"] = Json::object();
  if (k.tiled_loss) j["model"]["type"] = "liger";  // Liger fused linear cross-entropy: the tiled loss
  j["model"]["name_or_path"] = plan.model.name;
  j["model"]["attn_implementation"] = attn_implementation(plan);
  // ModelConfig.dtype defaults to bf16: an fp32 plan must say so (arctic_training/config/model.py).
  j["model"]["dtype"] = to_string(k.precision);
  if (k.act_ckpt == ActCkpt::kNone) j["model"]["disable_activation_checkpoint"] = true;
  j["data"] = {{"sources", Json::array({"HuggingFaceH4/ultrachat_200k"})}, {"pack_samples", true}, {"max_length", plan.seq_len}};
  std::string head = summary(plan, ExportFormat::kArctic);
  head += "# Placeholders: model.name_or_path (put the Hugging Face id or a local path), data.sources.\n";
  head += nvme_note(k);
  if (o.warmup_steps > 0 && o.train_steps == 0) {
    head += "# Warm-up: " + std::to_string(o.warmup_steps) +
            " steps; set scheduler.warmup_ratio to that over the run's steps.\n";
  }
  if (o.lr_schedule != LrSchedule::kConstant && o.min_lr > 0) {
    head += "# min_lr " + format_number(o.min_lr) + ": transformers' " + to_string(o.lr_schedule) +
            " schedule decays to 0 (the engine's and DeepSpeed's stop at min_lr).\n";
  }
  // DeepSpeed's launcher otherwise starts one rank per device it finds, whatever the plan says.
  const int64_t nodes = plan.cluster.num_nodes();
  head += "# Launch: arctic_training THIS.yml --num_gpus " + std::to_string(plan.cluster.num_gpus / nodes) +
          (nodes > 1 ? " --num_nodes " + std::to_string(nodes) + " --hostfile HOSTFILE (placeholder: the nodes, one a line)"
                     : std::string()) +
          "\n";
  return with_yaml(head, j);
}

std::string engine_flags(const OptimizerSpec& o) {
  return "--lr " + format_number(o.lr) + " --warmup-steps " + std::to_string(o.warmup_steps) + " --lr-schedule " +
         to_string(o.lr_schedule) + " --min-lr " + format_number(o.min_lr) + " --weight-decay " +
         format_number(o.weight_decay) + " --grad-clip " + format_number(o.grad_clip) +
         (o.train_steps > 0 ? " --train-steps " + std::to_string(o.train_steps) : std::string()) + " " +
         export_internal::adam_dash_flags(o);
}

// `text` in single quotes for bash ('it'\''s').
std::string single_quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// torchrun's node arguments for a plan on several nodes: every node runs the same line and meets
// the others at the first node's rendezvous (c10d), which MASTER_ADDR names.
std::string multi_node_torchrun(const PlanSpec& plan) {
  const int64_t nodes = plan.cluster.num_nodes();
  return "torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " + std::to_string(plan.cluster.num_gpus / nodes) +
         " --rdzv-backend c10d --rdzv-endpoint \"${MASTER_ADDR}:${MASTER_PORT:-" + std::to_string(kRdzvPort) + "}\"";
}

// A plan priced for the bundled engine (--trainer engine) launches it with torchrun: one rank per
// GPU, each `spplan run` without --nproc reading torchrun's RANK/WORLD_SIZE/LOCAL_WORLD_SIZE
// (engine/run/launcher.hpp). --no-python: the ranks are the spplan executable, not a script. One
// node starts standalone; several meet at the first node's rendezvous.
std::string engine_script(const PlanSpec& plan, const std::string& plan_path) {
  const int64_t nodes = plan.cluster.num_nodes();
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n" << summary(plan, ExportFormat::kTorchrun);
  o << "# Priced with --trainer engine: spplan's engine runs this plan, one rank per GPU.\n"
    << "# Usage: STEPS=1000 THIS.sh [--data FILE] [--eos-id N] [--save DIR] [--log FILE] ... (spplan run flags)\n";
  if (nodes > 1) {
    o << "# Run this on each of the " << nodes << " nodes; MASTER_ADDR names the first. The plan, --data and --save\n"
      << "# paths must be the same on every node (a shared file system): each rank saves its own shard.\n";
  }
  o << "set -euo pipefail\n";
  if (nodes > 1) o << ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n";
  if (plan_path.empty()) {
    o << "PLAN=\"${PLAN:?set PLAN to this plan's TOML file (spplan plan ... --trainer engine --out FILE.toml)}\"\n";
  } else {
    o << "PLAN=${PLAN:-" << single_quoted(plan_path) << "}\n";  // unquoted: an assignment does not split
  }
  o << "STEPS=\"${STEPS:?set STEPS to the optimizer steps to train (spplan run --steps)}\"\n";
  o << (nodes > 1 ? multi_node_torchrun(plan) : "torchrun --standalone --nnodes 1 --nproc-per-node " + std::to_string(plan.cluster.num_gpus))
    << " --no-python spplan run --plan \"$PLAN\" --steps \"$STEPS\" " << engine_flags(plan.optimizer) << " \"$@\"\n";
  return o.str();
}

std::string torchrun_script(const PlanSpec& plan, const std::string& plan_path) {
  if (torchrun_program(plan) == "spplan-run") return engine_script(plan, plan_path);
  const Knobs& k = plan.knobs;
  const int64_t nodes = plan.cluster.num_nodes();
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n" << summary(plan, ExportFormat::kTorchrun);
  o << "# Write `spplan export --format deepspeed` of the same plan to " << kDsConfigFile
    << " first; train.py is your\n# DeepSpeed / HF Trainer script.";
  o << (nodes > 1 ? " Run this on each node; MASTER_ADDR names the first node.\n" : "\n");
  if (k.offload_optimizer != OffloadDevice::kNone) {
    o << "# Optimizer offload (" << to_string(k.offload_optimizer)
      << "): DeepSpeed runs AdamW as DeepSpeedCPUAdam on the host CPUs.\n";
  }
  o << nvme_note(k);
  o << "# The same optimizer on spplan's engine: spplan run --plan " << (plan_path.empty() ? "PLAN.toml" : plan_path) << " "
    << engine_flags(plan.optimizer) << "\n";
  o << sequence_text(plan) << "# Arguments after THIS.sh go to train.py.\n";
  o << model_load_note(plan);
  o << "set -euo pipefail\n";
  o << (nodes > 1 ? ": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"\n"
                  : "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n");
  o << export_internal::alloc_conf_export();
  o << ulysses_environment(plan);
  o << multi_node_torchrun(plan) << " train.py --deepspeed " << kDsConfigFile << " " << hf_trainer_flags(plan) << " \"$@\"\n";
  return o.str();
}

// ArcticTraining's optimizer config has lr, weight decay and betas but no eps: its FusedAdam and
// DeepSpeedCPUAdam run their default 1e-8 (arctic_training 0.8.0 optimizer/adam_factory.py).
constexpr double kArcticAdamEps = 1e-8;

Status check_arctic_optimizer(const OptimizerSpec& o) {
  if (o.adam_eps == kArcticAdamEps) return Status::ok();
  return Status::invalid("key \"optimizer.adam_eps\": value " + format_number(o.adam_eps) +
                         " cannot be expressed for ArcticTraining (its optimizer config has no eps: FusedAdam runs " +
                         format_number(kArcticAdamEps) + "; allowed: " + format_number(kArcticAdamEps) +
                         ", or another format)");
}

}  // namespace

const std::vector<std::string>& export_format_names() {
  static const std::vector<std::string> kNames{"deepspeed", "accelerate", "arctic", "torchrun", "megatron",
                                               "torchtitan", "swift", "axolotl", "trl"};
  return kNames;
}

std::string to_string(ExportFormat format) { return export_format_names()[static_cast<size_t>(format)]; }

Result<ExportFormat> parse_export_format(std::string_view name, const std::string& where) {
  const auto& names = export_format_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<ExportFormat>(i);
  }
  return Status::invalid(where + ": value \"" + std::string(name) +
                         "\" is not a known format (allowed: " + join(names, ", ") + ")");
}

Result<std::string> export_plan(const PlanSpec& given, ExportFormat format, const std::string& plan_path) {
  // Every format is a file its stack reads as UTF-8 (YAML, TOML, JSON, whose dump() throws on any
  // other byte), and a name may come from a Latin-1 folder: written as \xNN text (utf8_text).
  PlanSpec plan = given;
  plan.model.name = utf8_text(given.model.name);
  plan.cluster.gpu.name = utf8_text(given.cluster.gpu.name);
  const WhereFn where = plan_file_key;
  SPPLAN_RETURN_IF_ERROR(check_plan(plan, where));
  // Whether the format launches the plan's trainer and expresses its knobs: the trainer's record.
  SPPLAN_RETURN_IF_ERROR(check_format_expresses(plan, to_string(format), where));
  if (format == ExportFormat::kMegatron) SPPLAN_RETURN_IF_ERROR(export_internal::check_megatron_model(plan.model));
  if (format == ExportFormat::kArctic) SPPLAN_RETURN_IF_ERROR(check_arctic_optimizer(plan.optimizer));
  const int64_t nodes = plan.cluster.num_nodes();
  if (plan.cluster.num_gpus % nodes != 0) {
    return Status::invalid("key \"cluster.num_gpus\": value " + std::to_string(plan.cluster.num_gpus) +
                           " does not spread evenly over " + std::to_string(nodes) + " nodes of " +
                           std::to_string(plan.cluster.gpus_per_node()) +
                           " GPUs per node (allowed: a GPU count that divides evenly by the node count)");
  }
  switch (format) {
    case ExportFormat::kDeepSpeed: return deepspeed_json(plan).dump(2) + "\n";
    case ExportFormat::kAccelerate:
      return plan.knobs.cp > 1 ? export_internal::accelerate_cp_yaml(plan) : accelerate_yaml(plan);
    case ExportFormat::kArctic: return arctic_yaml(plan);
    case ExportFormat::kTorchrun: return torchrun_script(plan, plan_path);
    case ExportFormat::kMegatron: return export_internal::megatron_script(plan);
    case ExportFormat::kTorchtitan: return export_internal::torchtitan_toml(plan);
    case ExportFormat::kSwift: return export_internal::swift_script(plan);
    case ExportFormat::kAxolotl: return export_internal::axolotl_yaml(plan);
    case ExportFormat::kTrl: return export_internal::trl_yaml(plan);
  }
  return Status::internal("export: unknown format");
}

// The helpers context_parallel.cpp shares with the formats above (export_internal.hpp).
namespace export_internal {

std::string summary_text(const PlanSpec& plan, ExportFormat format) { return summary(plan, format); }
std::string yaml_text(const std::string& head, const nlohmann::ordered_json& body) { return with_yaml(head, body); }
nlohmann::ordered_json deepspeed_config(const PlanSpec& plan) { return deepspeed_json(plan); }
std::string hf_lr_scheduler_name(const OptimizerSpec& o) {
  return o.lr_schedule == LrSchedule::kConstant ? "constant_with_warmup" : to_string(o.lr_schedule);
}
int64_t hf_warmup_steps(const OptimizerSpec& o) { return exported_warmup_steps(o); }
const char* attn_implementation_name(const PlanSpec& plan) { return attn_implementation(plan); }
std::string engine_optimizer_flags(const OptimizerSpec& o) { return engine_flags(o); }
std::string hf_trainer_flags_with_checkpointing(const PlanSpec& plan) { return hf_trainer_flags(plan); }
std::string sequence_note(const PlanSpec& plan) { return sequence_text(plan); }
int64_t sequence_padding_multiple(const PlanSpec& plan) { return sequence_multiple(plan.knobs); }
nlohmann::ordered_json hf_trainer_argument_values(const PlanSpec& plan) { return hf_trainer_arguments(plan, true); }
std::string hf_trainer_flags_without_checkpointing(const PlanSpec& plan, bool valued_bools) {
  return hf_trainer_flags(plan, false, valued_bools);
}
int rdzv_port() { return kRdzvPort; }
// The caching allocator's expandable segments, which the plan's memory assumes (costmodel
// memory_phases.cpp), unless the user set the variable: the engine's rule (alloc_conf.hpp).
std::string alloc_conf_export() {
  return "export PYTORCH_CUDA_ALLOC_CONF=\"${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\"\n";
}
// The plan's betas and eps: every export states them, where ArcticTraining and the HF Trainer would
// default beta2 to 0.999.
std::string adam_dash_flags(const OptimizerSpec& o) {
  return "--adam-beta1 " + format_number(o.adam_beta1) + " --adam-beta2 " + format_number(o.adam_beta2) +
         " --adam-eps " + format_number(o.adam_eps);
}
const char* main_process_ip_placeholder() { return kMainProcessIp; }
std::string model_class_note(const PlanSpec& plan) { return model_class_lines(plan); }

}  // namespace export_internal

}  // namespace spplan
