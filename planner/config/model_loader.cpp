// Model presets, model TOML files, Hugging Face config.json files and model folders -> ModelSpec
// (a config.json is read by config_json_loader.hpp).
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/config/config_json_loader.hpp"
#include "planner/config/config_keys.hpp"
#include "planner/config/family_defaults.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/model_families.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/preset_path.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan {
namespace {

// A TOML table of scalars as a JSON object, for the readers written for config.json.
Result<nlohmann::json> scalar_table_json(const KeyReader& r, const std::string& name, const toml::node& node) {
  if (!node.is_table()) return Status::invalid(r.where(name) + ": value " + describe(node) + " is not allowed (allowed: a table)");
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : *node.as_table()) {
    const std::string k(key.str());
    // By the node's type first: toml++'s value<int64_t>() converts a float, and a float beyond
    // int64's range is undefined behaviour there (as KeyReader::read_int, toml_reader.cpp).
    if (const auto* integer = value.as_integer()) {
      j[k] = integer->get();
    } else if (const auto* real = value.as_floating_point()) {
      j[k] = real->get();
    } else if (auto b = value.value<bool>()) {
      j[k] = *b;
    } else if (auto str = value.value<std::string>()) {
      j[k] = *str;
    } else {
      return Status::invalid(r.where(name + "." + k) + ": value " + describe(value) +
                             " is not allowed (allowed: a number, a string or true/false)");
    }
  }
  return j;
}

// The family a model TOML file names (model_type), if any; one spplan has not read is refused, as
// a config.json of it is: its layers may hold what no key here names. A multimodal family names
// its text model's record.
Result<const ModelFamily*> toml_family(KeyReader& r) {
  std::string model_type;
  SPPLAN_RETURN_IF_ERROR(r.read_string("model_type", &model_type, false));
  if (!r.has("model_type")) return static_cast<const ModelFamily*>(nullptr);
  const ModelFamily* family = find_family(model_type);
  if (family != nullptr && !family->text_model_type.empty()) family = find_family(family->text_model_type);
  if (family != nullptr) return family;
  return Status::invalid(r.where("model_type") + ": value \"" + printable(model_type) +
                         "\" is a family whose layers spplan has not read, and would price wrong (allowed: one of " +
                         join(priced_model_types()) + "; or no model_type, for the shapes of a decoder of their layers)");
}

// A model TOML file states its shapes, its window and its context (an absent window is none:
// mistral-7b.toml is v0.3, whose config.json says null where MistralConfig's default is 4096); from
// its family (family_defaults.hpp) it takes the parts no key names and the defaults of the rest.
Result<ModelSpec> model_from_toml(const std::string& path, const toml::table& table) {
  ModelSpec m;
  m.name = std::filesystem::path(path).stem().string();
  KeyReader r(path, table);
  SPPLAN_RETURN_IF_ERROR(r.read_string("name", &m.name, false));
  SPPLAN_ASSIGN_OR_RETURN(const ModelFamily* family, toml_family(r));
  const auto part = [family](bool ModelFamily::*field) { return family != nullptr && family->*field; };
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_hidden_layers", &m.num_hidden_layers, true, 1, kMaxLayers));
  SPPLAN_RETURN_IF_ERROR(r.read_int("hidden_size", &m.hidden_size, true, 1, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_attention_heads", &m.num_attention_heads, true, 1, kMaxHeads));
  m.num_key_value_heads = m.num_attention_heads;
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_key_value_heads", &m.num_key_value_heads, false, 1, kMaxHeads));
  m.head_dim = m.hidden_size / m.num_attention_heads;
  SPPLAN_RETURN_IF_ERROR(r.read_int("head_dim", &m.head_dim, false, 1, kMaxHeads));
  SPPLAN_RETURN_IF_ERROR(r.read_int("intermediate_size", &m.intermediate_size, true, 1, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("vocab_size", &m.vocab_size, true, 1, kMaxDim));
  m.tie_word_embeddings = family_flag(family, "tie_word_embeddings", false);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("tie_word_embeddings", &m.tie_word_embeddings, false));
  m.qk_norm = part(&ModelFamily::qk_norm) || family_flag(family, "use_qk_norm", false);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("qk_norm", &m.qk_norm, false));
  m.sandwich_norms = part(&ModelFamily::sandwich_norms);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("sandwich_norms", &m.sandwich_norms, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("rope_theta", &m.rope_theta, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("rms_norm_eps", &m.rms_norm_eps, false));
  m.attention_bias = part(&ModelFamily::qkv_bias) || family_flag(family, "attention_bias", false);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("attention_bias", &m.attention_bias, false));
  SPPLAN_RETURN_IF_ERROR(r.read_int("sliding_window", &m.sliding_window, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("full_attention_layers", &m.full_attention_layers, false, 0, kMaxLayers));
  SPPLAN_RETURN_IF_ERROR(r.read_int("max_position_embeddings", &m.max_position_embeddings, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_experts", &m.num_experts, false, 0, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_experts_per_tok", &m.experts_per_token, false, 0, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("moe_intermediate_size", &m.moe_intermediate_size, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("output_router_logits", &m.output_router_logits, false));
  m.norm_topk_prob = family_flag(family, "norm_topk_prob", m.norm_topk_prob);  // Qwen3MoeConfig's false
  SPPLAN_RETURN_IF_ERROR(r.read_bool("norm_topk_prob", &m.norm_topk_prob, false));
  m.router_aux_loss_coef = family_number(family, "router_aux_loss_coef", m.router_aux_loss_coef);
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("router_aux_loss_coef", &m.router_aux_loss_coef, false));
  // gpt-oss's model type brings its sinks, clamp and biased, softmax-after-top-k router (read_gpt_oss).
  m.attention_sinks = m.expert_biases = m.router_softmax_after_topk = part(&ModelFamily::gpt_oss_parts);
  m.swiglu_limit = family_number(family, "swiglu_limit", 0.0);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("attention_sinks", &m.attention_sinks, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("swiglu_limit", &m.swiglu_limit, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("expert_biases", &m.expert_biases, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("router_softmax_after_topk", &m.router_softmax_after_topk, false));
  // GLM-4.5's model type brings its mixture's defaults (Glm4MoeConfig: one shared expert, the first
  // layer dense, the sigmoid router, half the head RoPE-rotated: read_glm_moe).
  auto shared_experts = static_cast<int64_t>(family_number(family, "n_shared_experts", 0));
  m.first_dense_layers = static_cast<int64_t>(family_number(family, "first_k_dense_replace", 0));
  m.router_sigmoid = part(&ModelFamily::router_sigmoid);
  m.partial_rotary_factor = family_number(family, "partial_rotary_factor", 1.0);
  m.routed_scaling_factor = family_number(family, "routed_scaling_factor", m.routed_scaling_factor);
  SPPLAN_RETURN_IF_ERROR(r.read_int("n_shared_experts", &shared_experts, false, 0, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("first_k_dense_replace", &m.first_dense_layers, false, 0, kMaxLayers));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("router_sigmoid", &m.router_sigmoid, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("partial_rotary_factor", &m.partial_rotary_factor, false));
  SPPLAN_RETURN_IF_ERROR(r.read_int("n_group", &m.router_groups, false, 1, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("topk_group", &m.router_topk_groups, false, 1, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("routed_scaling_factor", &m.routed_scaling_factor, false));
  m.shared_expert_intermediate_size = shared_experts * m.moe_intermediate_size;
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("encoder_params", &m.encoder_params, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("encoders_left_out", &m.encoders_left_out, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("causal_lm_class", &m.causal_lm_class, false));
  r.mark_read("rope_scaling");
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  if (const toml::node* node = table.get("rope_scaling")) {
    SPPLAN_ASSIGN_OR_RETURN(const nlohmann::json scaling, scalar_table_json(r, "rope_scaling", *node));
    // The same keys as config.json's "rope_scaling" (rope_scaling.hpp), under [rope_scaling].
    const nlohmann::json config{{"rope_scaling", scaling}, {"max_position_embeddings", m.max_position_embeddings}};
    SPPLAN_RETURN_IF_ERROR(read_rope_config(ConfigKeys(path, config), &m));
  }
  SPPLAN_RETURN_IF_ERROR(check_model(m, path));
  return m;
}

// The file a model argument names: a preset's TOML, the path given, or a Hugging Face model
// folder's config.json.
Result<std::string> resolve_model(std::string_view name_or_path, const std::string& flag) {
  const std::string text(name_or_path);
  Result<std::string> file = resolve_preset("models", flag, text, model_presets(), kModelFilesAllowed);
  if (file.ok() || look_at(text).kind != PathKind::kDirectory) return file;
  const std::string prefix = flag.empty() ? "" : flag + ": ";
  if (is_preset_name(text)) {
    // A folder is a path, as a file is: a bare name is a preset's, whatever folders lie where the
    // command runs (a folder "qwen3-8b" would otherwise shadow the preset, or be shadowed by it).
    return Status::invalid(prefix + "value \"" + printable(text) + "\" is not a preset, and a folder is given as a path " +
                           "(allowed: ./" + printable(text) + " for the folder here; presets: " + join(model_presets()) + ")");
  }
  const std::string config = (std::filesystem::path(text) / "config.json").string();
  if (look_at(config).kind == PathKind::kMissing) {
    return Status::invalid(prefix + printable(text) + ": a folder without config.json (allowed: " + kModelAllowed + ")");
  }
  SPPLAN_RETURN_IF_ERROR(check_input_file(config));  // a folder or a device named config.json
  return config;
}

}  // namespace

Result<ModelSpec> load_model(std::string_view name_or_path, const std::string& flag) {
  SPPLAN_ASSIGN_OR_RETURN(const std::string path, resolve_model(name_or_path, flag));
  if (std::filesystem::path(path).extension() == ".json") return model_from_config_json(path);
  SPPLAN_ASSIGN_OR_RETURN(const toml::table table, parse_toml_file(path));
  return model_from_toml(path, table);
}

Result<ModelSpec> model_from_table(const std::string& source, const toml::table& table) {
  return model_from_toml(source, table);
}

std::vector<std::string> model_presets() { return list_presets("models"); }

Result<std::string> model_file(std::string_view name_or_path) { return resolve_model(name_or_path, "--model"); }

}  // namespace spplan
