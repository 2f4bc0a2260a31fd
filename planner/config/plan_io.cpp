// Plan files: read (strict, with presets allowed for model and gpu) and write (self-contained).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/plan_documents_toml.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/preset_path.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/utf8_text.hpp"

namespace spplan {
namespace {

const toml::table* subtable(const toml::table& root, std::string_view key) { return root[key].as_table(); }

// [model] or [gpu]: either `preset = "name"` alone, or the full set of keys.
template <typename Spec, typename LoadPreset, typename FromTable>
Result<Spec> read_part(const std::string& path, const toml::table& root, std::string_view key, LoadPreset load_preset,
                       FromTable from_table) {
  const toml::table* table = subtable(root, key);
  if (table == nullptr) {
    const std::string allowed = "a table with preset = \"name\" or all " + std::string(key) + " keys";
    if (const toml::node* node = root.get(key)) {
      return Status::invalid(path + ": key \"" + std::string(key) + "\": value " + describe(*node) +
                             " is not allowed (allowed: " + allowed + ")");
    }
    return Status::invalid(path + ": key \"" + std::string(key) + "\": missing (required: " + allowed + ")");
  }
  if (table->contains("preset")) {
    KeyReader r(path, *table, std::string(key) + ".");
    std::string preset;
    SPPLAN_RETURN_IF_ERROR(r.read_string("preset", &preset, true));
    SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
    auto loaded = load_preset(preset, "");  // the context below names the key instead of a flag
    if (!loaded.ok()) return loaded.status().with_context(r.where("preset"));
    return loaded;
  }
  return from_table(path + " [" + std::string(key) + "]", *table);
}

// An optional key naming one of `names`; absent keeps *value.
template <typename Enum>
Status read_enum(KeyReader& r, std::string_view key, const std::vector<std::string>& names, Enum* value) {
  size_t index = static_cast<size_t>(*value);
  SPPLAN_RETURN_IF_ERROR(r.read_choice(key, &index, false, names));
  *value = static_cast<Enum>(index);
  return Status::ok();
}

// A key in the range its flag takes too (knob_flags.hpp KnobRanges, optimizer_spec.hpp OptimizerRanges).
Status read_in(KeyReader& r, std::string_view key, int64_t* out, bool required, IntRange range) {
  return r.read_int(key, out, required, range.min, range.max);
}
Status read_in(KeyReader& r, std::string_view key, double* out, bool required, NumberRange range) {
  return r.read_bounded(key, out, required, range.min, range.max);
}

Status read_knobs(const std::string& path, const toml::table& table, Knobs* k) {
  KeyReader r(path, table, "knobs.");
  SPPLAN_RETURN_IF_ERROR(read_in(r, "sp", &k->sp, true, kKnobRanges.sp));
  // Ring degree and how it moves K/V; absent (plans written before them): cp 1, no ring.
  SPPLAN_RETURN_IF_ERROR(read_in(r, "cp", &k->cp, false, kKnobRanges.cp));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "cp_comm", cp_comm_names(), &k->cp_comm));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "zero_stage", &k->zero_stage, true, kKnobRanges.zero_stage));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "offload_optimizer", offload_device_names(), &k->offload_optimizer));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "offload_params", offload_device_names(), &k->offload_params));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "act_ckpt", act_ckpt_names(), &k->act_ckpt));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "sp_comm_dtype", comm_dtype_names(), &k->sp_comm_dtype));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "precision", precision_names(), &k->precision));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("tiled_mlp", &k->tiled_mlp, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("tiled_loss", &k->tiled_loss, false));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "micro_batch", &k->micro_batch, false, kKnobRanges.micro_batch));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "grad_accum_steps", &k->grad_accum_steps, false, kKnobRanges.grad_accum_steps));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "reduce_bucket_elems", &k->reduce_bucket_elems, false, kKnobRanges.reduce_bucket_elems));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "prefetch_bucket_elems", &k->prefetch_bucket_elems, false, kKnobRanges.prefetch_bucket_elems));
  return r.check_no_unknown_keys();
}

// [optimizer] (optional): the keys of OptimizerSpec, each optional.
Status read_optimizer(const std::string& path, const toml::table& table, OptimizerSpec* o) {
  KeyReader r(path, table, "optimizer.");
  SPPLAN_RETURN_IF_ERROR(read_in(r, "lr", &o->lr, false, kOptimizerRanges.lr));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "warmup_steps", &o->warmup_steps, false, kOptimizerRanges.warmup_steps));
  SPPLAN_RETURN_IF_ERROR(read_enum(r, "lr_schedule", lr_schedule_names(), &o->lr_schedule));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "min_lr", &o->min_lr, false, kOptimizerRanges.min_lr));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "weight_decay", &o->weight_decay, false, kOptimizerRanges.weight_decay));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "grad_clip", &o->grad_clip, false, kOptimizerRanges.grad_clip));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "train_steps", &o->train_steps, false, kOptimizerRanges.train_steps));  // 0: not known
  SPPLAN_RETURN_IF_ERROR(read_in(r, "adam_beta1", &o->adam_beta1, false, kOptimizerRanges.adam_beta));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "adam_beta2", &o->adam_beta2, false, kOptimizerRanges.adam_beta));
  SPPLAN_RETURN_IF_ERROR(read_in(r, "adam_eps", &o->adam_eps, false, kOptimizerRanges.adam_eps));
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  return check_optimizer(*o, [&path](const std::string& key) { return path + ": key \"optimizer." + key + "\""; });
}

// Where a plan-file value came from, for check_plan messages.
WhereFn file_where(const std::string& path) {
  return [path](const std::string& key) { return path + ": " + plan_file_key(key); };
}

// A TOML basic string that reads back as `text`: a name may hold quotes or newlines (a
// config.json's folder name), which written raw would end the string early.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The model keys that older plans lack, written only when they are not the default so that a plan
// of a Llama or Qwen3 reads as before: q/k/v biases, the window and its full layers, Gemma's norms,
// a mixture's experts, the context and RoPE scaling.
std::string model_extras_toml(const ModelSpec& m) {
  std::ostringstream o;
  o.precision(17);
  if (m.attention_bias) o << "attention_bias = true\n";
  if (m.sliding_window > 0) o << "sliding_window = " << m.sliding_window << "\n";
  if (m.full_attention_layers > 0) o << "full_attention_layers = " << m.full_attention_layers << "\n";
  if (m.sandwich_norms) o << "sandwich_norms = true\n";
  if (m.encoder_params > 0) o << "encoder_params = " << m.encoder_params << "\n";
  if (m.encoders_left_out) o << "encoders_left_out = true\n";
  if (!m.causal_lm_class) o << "causal_lm_class = false\n";
  if (m.is_moe()) {  // without them a plan file of a mixture read back as a dense model
    o << "num_experts = " << m.num_experts << "\nnum_experts_per_tok = " << m.experts_per_token
      << "\nmoe_intermediate_size = " << m.moe_intermediate_size << "\n";
    if (m.output_router_logits) o << "output_router_logits = true\n";
    if (!m.norm_topk_prob) o << "norm_topk_prob = false\n";
    if (m.router_aux_loss_coef != ModelSpec{}.router_aux_loss_coef) o << "router_aux_loss_coef = " << m.router_aux_loss_coef << "\n";
    if (m.expert_biases) o << "expert_biases = true\n";
    if (m.router_softmax_after_topk) o << "router_softmax_after_topk = true\n";
    if (m.shared_expert_intermediate_size > 0) {  // a multiple of the experts' width, as both loaders make it
      o << "n_shared_experts = " << m.shared_expert_intermediate_size / m.moe_intermediate_size << "\n";
    }
    if (m.first_dense_layers > 0) o << "first_k_dense_replace = " << m.first_dense_layers << "\n";
    if (m.router_sigmoid) o << "router_sigmoid = true\n";
    if (m.router_groups != 1) o << "n_group = " << m.router_groups << "\n";
    if (m.router_topk_groups != 1) o << "topk_group = " << m.router_topk_groups << "\n";
    if (m.routed_scaling_factor != 1.0) o << "routed_scaling_factor = " << m.routed_scaling_factor << "\n";
  }
  if (m.partial_rotary_factor != 1.0) o << "partial_rotary_factor = " << m.partial_rotary_factor << "\n";
  if (m.attention_sinks) o << "attention_sinks = true\n";
  if (m.swiglu_limit > 0) o << "swiglu_limit = " << m.swiglu_limit << "\n";
  if (m.max_position_embeddings > 0) o << "max_position_embeddings = " << m.max_position_embeddings << "\n";
  const nlohmann::json scaling = rope_scaling_json(m.rope_scaling);
  if (scaling.is_null()) return o.str();
  o << "\n[model.rope_scaling]\n";
  for (const auto& [key, v] : scaling.items()) {
    o << key << " = ";
    if (v.is_string()) {
      o << toml_string(v.get<std::string>());
    } else if (v.is_boolean()) {
      o << (v.get<bool>() ? "true" : "false");
    } else if (v.is_number_float()) {
      std::ostringstream number;
      number.precision(17);
      number << v.get<double>();
      o << number.str() << (number.str().find_first_of(".e") == std::string::npos ? ".0" : "");  // a TOML float
    } else {
      o << v.get<int64_t>();
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace

Result<PlanSpec> load_plan(const std::string& path) {
  SPPLAN_ASSIGN_OR_RETURN(const toml::table root, parse_toml_file(path));
  PlanSpec plan;
  KeyReader top(path, root);
  // "32k" as on the command line (parse_seq_len: k = 1024, M = 1024^2), or a whole number.
  if (const toml::node* seq = root.get("seq_len"); seq != nullptr && seq->is_string()) {
    SPPLAN_ASSIGN_OR_RETURN(plan.seq_len, parse_seq_len(top.where("seq_len"), seq->value_or(std::string())));
    top.mark_read("seq_len");
  } else {
    SPPLAN_RETURN_IF_ERROR(top.read_int("seq_len", &plan.seq_len, true, 1, kMaxSeqLen));
  }
  std::string trainer = "arctic";  // plans written before the key existed
  SPPLAN_RETURN_IF_ERROR(top.read_string("trainer", &trainer, false));
  SPPLAN_ASSIGN_OR_RETURN(plan.stack, load_trainer(trainer, top.where("trainer")));
  size_t attention = static_cast<size_t>(plan.stack.attention);  // absent: the trainer's kernel
  SPPLAN_RETURN_IF_ERROR(top.read_choice("attention", &attention, false, attention_kernel_names()));
  plan.stack.attention = static_cast<AttentionKernel>(attention);
  // Absent: the trainer's (TrainingStack::freezes_encoders); written for a model with encoders.
  SPPLAN_RETURN_IF_ERROR(top.read_bool("freeze_encoders", &plan.stack.freezes_encoders, false));
  for (const char* key : {"model", "gpu", "cluster", "knobs", "optimizer", "documents"}) top.mark_read(key);
  SPPLAN_RETURN_IF_ERROR(top.check_no_unknown_keys());

  SPPLAN_ASSIGN_OR_RETURN(plan.model, read_part<ModelSpec>(path, root, "model", load_model, model_from_table));
  SPPLAN_ASSIGN_OR_RETURN(plan.cluster.gpu, read_part<GpuSpec>(path, root, "gpu", load_gpu, gpu_from_table));

  const toml::table* cluster = subtable(root, "cluster");
  if (cluster == nullptr) return Status::invalid(path + ": key \"cluster\": missing (required: a table with num_gpus)");
  KeyReader rc(path, *cluster, "cluster.");
  SPPLAN_RETURN_IF_ERROR(rc.read_int("num_gpus", &plan.cluster.num_gpus, true, 1, kMaxGpus));
  SPPLAN_RETURN_IF_ERROR(rc.read_int("gpus_per_node", &plan.cluster.gpu.gpus_per_node, false, 1, 1 << 16));
  SPPLAN_RETURN_IF_ERROR(rc.check_no_unknown_keys());

  const toml::table* knobs = subtable(root, "knobs");
  if (knobs == nullptr) return Status::invalid(path + ": key \"knobs\": missing (required: a table with sp and zero_stage)");
  SPPLAN_RETURN_IF_ERROR(read_knobs(path, *knobs, &plan.knobs));
  if (const toml::node* node = root.get("optimizer")) {
    if (!node->is_table()) {
      return Status::invalid(path + ": key \"optimizer\": value " + describe(*node) +
                             " is not allowed (allowed: a table with " + join(optimizer_keys()) + ")");
    }
    SPPLAN_RETURN_IF_ERROR(read_optimizer(path, *node->as_table(), &plan.optimizer));
    for (const auto& [key, value] : *node->as_table()) plan.optimizer_keys_in_file.emplace_back(key.str());
  }
  SPPLAN_RETURN_IF_ERROR(read_documents_table(path, root, &plan));
  // Unnamed (a plan written by hand), the ring variant is the trainer's, as the search's.
  if (!knobs->contains("cp_comm")) plan.knobs.cp_comm = searched_cp_comm(plan);
  // The kernel first: the trainer's rules read it (a ring on hf runs SDPA only).
  SPPLAN_RETURN_IF_ERROR(settle_attention(&plan, root.contains("attention"), file_where(path)));
  SPPLAN_RETURN_IF_ERROR(check_plan(plan, file_where(path)));
  return plan;
}

namespace {

// The `trainer` a plan file names: a preset by its name; a user's record by its absolute path.
// The path as given on the command line is relative to the folder the plan was made in, and a
// plan is read from others (export, simulate and run in a script's folder, on a cluster's node).
// A relative path in a hand-written plan is read as it always was, against the working folder.
// A record path that is not UTF-8 is written \xNN too (TOML holds nothing else): such a plan is
// refused when read, naming the path, as any record path that names no file.
std::string trainer_key_value(const TrainingStack& stack) {
  if (stack.record == nullptr || stack.record->files.empty() || is_preset_name(stack.trainer)) return stack.trainer;
  return utf8_text(stack.record->files.front());
}

}  // namespace

std::string plan_to_toml(const PlanSpec& plan) {
  const ModelSpec& m = plan.model;
  const GpuSpec& g = plan.cluster.gpu;
  const Knobs& k = plan.knobs;
  std::ostringstream o;
  o.precision(17);
  // TOML must be UTF-8 (toml++ refuses the whole file otherwise), and a name from a Latin-1 folder
  // ("mod\xe8le/config.json") is not: its bytes are written \xNN, which reads back as that text.
  const std::string model_name = utf8_text(m.name), gpu_name = utf8_text(g.name);
  o << "# spplan plan: " << printable(model_name) << " on " << plan.cluster.num_gpus << "x " << printable(gpu_name) << " at "
    << plan.seq_len << " tokens\n";
  o << "seq_len = " << plan.seq_len << "\ntrainer = " << toml_string(trainer_key_value(plan.stack))
    << "\nattention = " << toml_string(to_string(plan.stack.attention)) << "\n";
  if (m.has_encoders()) o << "freeze_encoders = " << (plan.stack.freezes_encoders ? "true" : "false") << "\n";
  o << "\n";
  o << "[model]\nname = " << toml_string(model_name) << "\nnum_hidden_layers = " << m.num_hidden_layers
    << "\nhidden_size = " << m.hidden_size << "\nnum_attention_heads = " << m.num_attention_heads
    << "\nnum_key_value_heads = " << m.num_key_value_heads << "\nhead_dim = " << m.head_dim
    << "\nintermediate_size = " << m.intermediate_size << "\nvocab_size = " << m.vocab_size
    << "\ntie_word_embeddings = " << (m.tie_word_embeddings ? "true" : "false")
    << "\nqk_norm = " << (m.qk_norm ? "true" : "false") << "\nrope_theta = " << m.rope_theta
    << "\nrms_norm_eps = " << m.rms_norm_eps << "\n";
  o << model_extras_toml(m) << "\n";
  o << "[gpu]\nname = " << toml_string(gpu_name)
    << (g.base.empty() ? std::string() : "\nbase = " + toml_string(g.base))  // measured as the preset it extends
    << "\nmemory_gib = " << g.memory_gib
    << "\nbf16_tflops = " << g.bf16_tflops << "\nfp32_tflops = " << g.fp32_tflops << "\nhbm_GBps = " << g.hbm_GBps << "\ngpus_per_node = " << g.gpus_per_node
    << "\nintra_node_GBps = " << g.intra_node_GBps << "\ninter_node_GBps = " << g.inter_node_GBps
    << "\npcie_GBps = " << g.pcie_GBps << "\nhost_memory_gib_per_node = " << g.host_memory_gib_per_node
    << "\nhost_adam_params_per_s = " << g.host_adam_params_per_s << "\nnvme_GBps_per_node = " << g.nvme_GBps_per_node
    << "\nprice_per_gpu_hour = " << g.price_per_gpu_hour << "\nmatmul_efficiency = " << g.matmul_efficiency
    << "\nattention_efficiency = " << g.attention_efficiency
    << "\nattention_bwd_efficiency = " << g.attention_bwd_efficiency
    << "\nsdpa_attention_efficiency = " << g.sdpa_attention_efficiency
    << "\nsdpa_attention_bwd_efficiency = " << g.sdpa_attention_bwd_efficiency;
  // The fp32 and backward-GEMM fractions and the causal and biased calls' extra work only when set
  // (0: the bf16 or forward ones, none counted apart, which the reader also assumes when absent).
  for (const auto& [key, value] : {std::pair{"fp32_matmul_efficiency", g.fp32_matmul_efficiency},
                                   std::pair{"fp32_attention_efficiency", g.fp32_attention_efficiency},
                                   std::pair{"fp32_attention_bwd_efficiency", g.fp32_attention_bwd_efficiency},
                                   std::pair{"matmul_bwd_efficiency", g.matmul_bwd_efficiency},
                                   std::pair{"fp32_matmul_bwd_efficiency", g.fp32_matmul_bwd_efficiency},
                                   std::pair{"fp32_elementwise_efficiency", g.fp32_elementwise_efficiency},
                                   std::pair{"attention_causal_extra_keys", g.attention_causal_extra_keys},
                                   std::pair{"attention_bwd_causal_extra_keys", g.attention_bwd_causal_extra_keys},
                                   std::pair{"attention_bias_extra_pairs", g.attention_bias_extra_pairs},
                                   std::pair{"attention_bwd_bias_extra_pairs", g.attention_bwd_bias_extra_pairs}}) {
    if (value > 0) o << "\n" << key << " = " << value;
  }
  o << "\ncomm_efficiency = " << g.comm_efficiency
    << "\nkernel_launch_s = " << g.kernel_launch_s << "\nelementwise_efficiency = " << g.elementwise_efficiency
    << "\nmatmul_fixed_s = " << g.matmul_fixed_s << "\nattention_fixed_s = " << g.attention_fixed_s
    << "\nattention_bwd_fixed_s = " << g.attention_bwd_fixed_s << "\nsdpa_attention_fixed_s = " << g.sdpa_attention_fixed_s
    << "\nsdpa_attention_bwd_fixed_s = " << g.sdpa_attention_bwd_fixed_s
    << "\ncollective_latency_s = " << g.collective_latency_s
    << "\ncuda_context_gib = " << g.cuda_context_gib << "\nnccl_gib_per_group = " << g.nccl_gib_per_group
    << "\nallocator_fragmentation = " << g.allocator_fragmentation
    << "\nnccl_a2a_gib_per_peer = " << g.nccl_a2a_gib_per_peer << "\ngemm_workspace_mib = " << g.gemm_workspace_mib;
  // A calibrated CPU's thread keys only when set (0, absent: not one).
  for (const auto& [key, value] :
       {std::pair{"host_threads", g.host_threads}, std::pair{"matmul_thread_speedup", g.matmul_thread_speedup},
        std::pair{"matmul_bwd_thread_speedup", g.matmul_bwd_thread_speedup},
        std::pair{"bf16_matmul_thread_speedup", g.bf16_matmul_thread_speedup},
        std::pair{"bf16_matmul_bwd_thread_speedup", g.bf16_matmul_bwd_thread_speedup}}) {
    if (value > 0) o << "\n" << key << " = " << value;
  }
  o << "\n\n";
  o << "[cluster]\nnum_gpus = " << plan.cluster.num_gpus << "\n\n";
  o << "[knobs]\nsp = " << k.sp << "\ncp = " << k.cp << "\ncp_comm = \"" << to_string(k.cp_comm) << "\"\nzero_stage = " << k.zero_stage << "\noffload_optimizer = \""
    << to_string(k.offload_optimizer) << "\"\noffload_params = \"" << to_string(k.offload_params)
    << "\"\nact_ckpt = \"" << to_string(k.act_ckpt) << "\"\ntiled_mlp = " << (k.tiled_mlp ? "true" : "false")
    << "\ntiled_loss = " << (k.tiled_loss ? "true" : "false") << "\nmicro_batch = " << k.micro_batch
    << "\ngrad_accum_steps = " << k.grad_accum_steps << "\nprecision = \"" << to_string(k.precision) << "\"\nsp_comm_dtype = \"" << to_string(k.sp_comm_dtype)
    << "\"\nreduce_bucket_elems = " << k.reduce_bucket_elems << "\nprefetch_bucket_elems = " << k.prefetch_bucket_elems
    << "\n";
  const OptimizerSpec& opt = plan.optimizer;
  o << "\n[optimizer]\nlr = " << opt.lr << "\nwarmup_steps = " << opt.warmup_steps << "\nlr_schedule = \""
    << to_string(opt.lr_schedule) << "\"\nmin_lr = " << opt.min_lr << "\nweight_decay = " << opt.weight_decay
    << "\ngrad_clip = " << opt.grad_clip << "\n";
  if (opt.train_steps > 0) o << "train_steps = " << opt.train_steps << "\n";
  o << "adam_beta1 = " << opt.adam_beta1 << "\nadam_beta2 = " << opt.adam_beta2 << "\nadam_eps = " << opt.adam_eps << "\n";
  return o.str() + documents_toml(plan);
}

std::string plan_file_key(const std::string& key) {
  if (key == "seq_len") return "key \"seq_len\"";
  if (key == "num_gpus") return "key \"cluster.num_gpus\"";
  if (key == "attention" || key == "trainer" || key == "model") return "key \"" + key + "\"";
  return "key \"knobs." + key + "\"";
}

}  // namespace spplan
