// Model presets, model TOML files, Hugging Face config.json files and model folders -> ModelSpec.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"
#include "planner/config/model_name.hpp"
#include "planner/config/multimodal_encoders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/config/preset_path.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan {
namespace {

// The same limits for TOML files and config.json: a simulated step walks every layer and head.
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr int64_t kMaxLayers = 10000;  // Llama-3.1-405B has 126; a simulated step walks every layer
constexpr int64_t kMaxHeads = int64_t{1} << 20;
constexpr double kGptOssSwigluLimit = 7.0;  // transformers' GptOssConfig default swiglu_limit
constexpr int64_t kMaxExperts = int64_t{1} << 20;  // the costmodel prices one GEMM launch per expert
// transformers 5.24's Glm4MoeConfig defaults, for a config.json (or a TOML of model_type "glm4_moe")
// that leaves a key out.
constexpr int64_t kGlmSharedExperts = 1;        // n_shared_experts
constexpr int64_t kGlmFirstDenseLayers = 1;     // first_k_dense_replace
constexpr double kGlmPartialRotaryFactor = 0.5; // partial_rotary_factor

// model_type values whose attention normalises q and k per head (HF Qwen3 modeling).
bool has_qk_norm(const std::string& model_type) {
  return model_type == "qwen3" || model_type == "qwen3_moe" || model_type == "gemma3" || model_type == "gemma3_text";
}
// Gemma 2's and 3's decoder layers (Gemma3DecoderLayer: pre_feedforward_layernorm and
// post_feedforward_layernorm beside Llama's two; Gemma 2's likewise).
bool has_sandwich_norms(const std::string& model_type) {
  return model_type == "gemma2" || model_type == "gemma3" || model_type == "gemma3_text";
}

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

Result<ModelSpec> model_from_toml(const std::string& path, const toml::table& table) {
  ModelSpec m;
  m.name = std::filesystem::path(path).stem().string();
  KeyReader r(path, table);
  std::string model_type;
  SPPLAN_RETURN_IF_ERROR(r.read_string("name", &m.name, false));
  SPPLAN_RETURN_IF_ERROR(r.read_string("model_type", &model_type, false));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_hidden_layers", &m.num_hidden_layers, true, 1, kMaxLayers));
  SPPLAN_RETURN_IF_ERROR(r.read_int("hidden_size", &m.hidden_size, true, 1, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_attention_heads", &m.num_attention_heads, true, 1, kMaxHeads));
  m.num_key_value_heads = m.num_attention_heads;
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_key_value_heads", &m.num_key_value_heads, false, 1, kMaxHeads));
  m.head_dim = m.hidden_size / m.num_attention_heads;
  SPPLAN_RETURN_IF_ERROR(r.read_int("head_dim", &m.head_dim, false, 1, kMaxHeads));
  SPPLAN_RETURN_IF_ERROR(r.read_int("intermediate_size", &m.intermediate_size, true, 1, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("vocab_size", &m.vocab_size, true, 1, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("tie_word_embeddings", &m.tie_word_embeddings, false));
  m.qk_norm = has_qk_norm(model_type);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("qk_norm", &m.qk_norm, false));
  m.sandwich_norms = has_sandwich_norms(model_type);
  SPPLAN_RETURN_IF_ERROR(r.read_bool("sandwich_norms", &m.sandwich_norms, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("rope_theta", &m.rope_theta, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("rms_norm_eps", &m.rms_norm_eps, false));
  m.attention_bias = model_type == "qwen2" || model_type == "gpt_oss";
  SPPLAN_RETURN_IF_ERROR(r.read_bool("attention_bias", &m.attention_bias, false));
  SPPLAN_RETURN_IF_ERROR(r.read_int("sliding_window", &m.sliding_window, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("full_attention_layers", &m.full_attention_layers, false, 0, kMaxLayers));
  SPPLAN_RETURN_IF_ERROR(r.read_int("max_position_embeddings", &m.max_position_embeddings, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_experts", &m.num_experts, false, 0, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("num_experts_per_tok", &m.experts_per_token, false, 0, kMaxExperts));
  SPPLAN_RETURN_IF_ERROR(r.read_int("moe_intermediate_size", &m.moe_intermediate_size, false, 0, kMaxDim));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("output_router_logits", &m.output_router_logits, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("norm_topk_prob", &m.norm_topk_prob, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("router_aux_loss_coef", &m.router_aux_loss_coef, false));
  // gpt-oss's model type brings its sinks, clamp and biased, softmax-after-top-k router (read_gpt_oss).
  const bool gpt_oss = model_type == "gpt_oss";
  m.attention_sinks = m.expert_biases = m.router_softmax_after_topk = gpt_oss;
  m.swiglu_limit = gpt_oss ? kGptOssSwigluLimit : 0.0;
  SPPLAN_RETURN_IF_ERROR(r.read_bool("attention_sinks", &m.attention_sinks, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("swiglu_limit", &m.swiglu_limit, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("expert_biases", &m.expert_biases, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bool("router_softmax_after_topk", &m.router_softmax_after_topk, false));
  // GLM-4.5's model type brings its mixture's defaults (Glm4MoeConfig: one shared expert, the first
  // layer dense, the sigmoid router, half the head RoPE-rotated: read_glm_moe).
  const bool glm = model_type == "glm4_moe";
  int64_t shared_experts = glm ? kGlmSharedExperts : 0;
  m.first_dense_layers = glm ? kGlmFirstDenseLayers : 0;
  m.router_sigmoid = glm;
  m.partial_rotary_factor = glm ? kGlmPartialRotaryFactor : 1.0;
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
  r.mark_read("rope_scaling");
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  if (const toml::node* node = table.get("rope_scaling")) {
    SPPLAN_ASSIGN_OR_RETURN(const nlohmann::json scaling, scalar_table_json(r, "rope_scaling", *node));
    // The same keys as config.json's "rope_scaling" (rope_scaling.hpp), under [rope_scaling].
    SPPLAN_RETURN_IF_ERROR(read_rope_config(path, nlohmann::json{{"rope_scaling", scaling},
                                                                   {"max_position_embeddings", m.max_position_embeddings}},
                                            &m));
  }
  SPPLAN_RETURN_IF_ERROR(check_model(m, path));
  return m;
}

// A JSON value for messages, cut short: a nested object can be arbitrarily long.
std::string short_dump(const nlohmann::json& v) {
  constexpr size_t kMaxChars = 60;
  const std::string text = v.dump();
  return text.size() <= kMaxChars ? text : text.substr(0, kMaxChars) + "...";
}

Status json_bad_value(const std::string& path, const char* key, const nlohmann::json& v, const std::string& allowed) {
  return Status::invalid(path + ": key \"" + key + "\": value " + short_dump(v) + " is not allowed (allowed: " +
                         allowed + ")");
}

// Reads one integer key of a config.json in [1, max]; `fallback` < 0 means required.
Status json_int(const std::string& path, const nlohmann::json& j, const char* key, int64_t fallback, int64_t max,
                int64_t* out) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback < 0) return Status::invalid(path + ": key \"" + key + "\": missing (required)");
    *out = fallback;
    return Status::ok();
  }
  const auto& v = j[key];
  // Every whole number >= 1 parses as number_unsigned: compare it unsigned before converting, so
  // that 18446744073709551615 is refused instead of wrapping to -1; a float (1e28) is refused too.
  if (!v.is_number_unsigned() || v.get<uint64_t>() < 1 || v.get<uint64_t>() > static_cast<uint64_t>(max)) {
    return json_bad_value(path, key, v, "a whole number from 1 to " + std::to_string(max));
  }
  *out = static_cast<int64_t>(v.get<uint64_t>());
  return Status::ok();
}

// Optional keys: absent or null keep *out; a value of another type is an error, not a silent default.
Status json_bool(const std::string& path, const nlohmann::json& j, const char* key, bool* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::ok();
  if (!j[key].is_boolean()) return json_bad_value(path, key, j[key], "true, false");
  *out = j[key].get<bool>();
  return Status::ok();
}

// The load-balancing loss's weight: 0 (no such loss) up to kMaxNumber.
Status json_nonnegative(const std::string& path, const nlohmann::json& j, const char* key, double* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::ok();
  const auto& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= kMaxNumber)) {
    return json_bad_value(path, key, v, "a number from 0 to " + format_number(kMaxNumber));
  }
  *out = v.get<double>();
  return Status::ok();
}

Status json_positive(const std::string& path, const nlohmann::json& j, const char* key, double* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::ok();
  const auto& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= kMinPositive && v.get<double>() <= kMaxNumber)) {
    return json_bad_value(path, key, v,
                          "a number from " + format_number(kMinPositive) + " to " + format_number(kMaxNumber));
  }
  *out = v.get<double>();
  return Status::ok();
}

// The file's top-level object; a syntax error names the byte where parsing stopped.
Result<nlohmann::json> read_json_object(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  std::ifstream in(path);
  // JSON leaves a repeated key to the reader (nlohmann keeps the last); two values for one key
  // mean the file was merged or edited by hand, and either value may be the intended one.
  std::vector<std::set<std::string>> keys_per_object;  // the keys seen in each open object
  std::string duplicate;
  const auto note_keys = [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys_per_object.emplace_back();
    if (event == Event::object_end) keys_per_object.pop_back();
    if (event == Event::key && duplicate.empty() && !keys_per_object.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(in, note_keys);
    if (!duplicate.empty()) {
      return Status::invalid(path + ": key \"" + printable(duplicate) +
                             "\": given twice in one object (allowed: each key once)");
    }
    if (j.is_object()) return j;
    return Status::invalid(path + ": the top level is " + std::string(j.type_name()) +
                           " (allowed: a JSON object, as in a config.json)");
  } catch (const nlohmann::json::parse_error& error) {
    return Status::invalid(path + ": not valid JSON at byte " + std::to_string(error.byte) +
                           " (allowed: a JSON object, as in a config.json)");
  } catch (const nlohmann::json::exception& error) {  // out_of_range: a number such as 1e400
    const std::string what = error.what();
    return Status::invalid(path + ": not valid JSON: " + what.substr(what.find("] ") + 2) +
                           " (allowed: a JSON object, as in a config.json)");
  }
}

// The families whose decoder layer is the one the costmodel prices (attention over q, k, v heads,
// a gated MLP or the mixtures read below, two or four RMSNorms), read from their transformers
// modeling files (Ministral is Mistral's layer with layer_types). Not Phi-3, whose FLOPs are these
// but whose fused qkv_proj output stays alive whole behind the v view attention saves, which the
// activations priced do not hold. Another family's config may hold layers no key above names
// (Llama 4's shared expert beside its routed one and its chunked attention, Jamba's and
// Nemotron-H's Mamba layers, Gemma 3n's per-layer inputs): priced as this decoder it would be
// confidently wrong, so it is refused, and a model TOML file (configs/models/) states the shapes of
// a family whose layers are these.
const std::vector<std::string>& priced_model_types() {
  static const std::vector<std::string> types = {"llama",   "mistral", "ministral", "mixtral", "qwen2",
                                                 "qwen3",   "qwen3_moe", "glm4_moe", "gpt_oss", "gemma",
                                                 "gemma2",  "gemma3",  "gemma3_text"};
  return types;
}

// A config.json's model_type is one of priced_model_types(). A config without one is not a
// transformers config (AutoConfig needs it) but shapes written by hand, read as a model TOML is.
Status check_priced_family(const std::string& path, const nlohmann::json& j) {
  if (!j.contains("model_type") || j["model_type"].is_null()) return Status::ok();
  const nlohmann::json& type = j["model_type"];
  const auto& priced = priced_model_types();
  if (type.is_string() && std::find(priced.begin(), priced.end(), type.get<std::string>()) != priced.end()) {
    return Status::ok();
  }
  return Status::invalid(path + ": key \"model_type\": value " + short_dump(type) +
                         " is a family whose layers spplan has not read, and would price wrong (allowed: " + join(priced) +
                         "; or a model TOML file with the shapes of a decoder of their layers)");
}

// The architecture keys of config.json files that change what a step costs in ways the costmodel
// does not count. Silently pricing such a model as the dense SwiGLU decoder it is not gives a wrong
// answer (a Mixtral 8x7B read as a 7B has about 6.6x too few parameters), so each refuses the file.
Status check_priceable(const std::string& path, const nlohmann::json& j) {
  const auto present = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
  // Mixtures of experts spplan prices: every layer routed over one set of SwiGLU experts (Mixtral's
  // num_local_experts, Qwen3-MoE's num_experts: read_moe), and GLM-4.5's (read_glm_moe). Not
  // priced: DeepSeek's (n_routed_experts beside its softmax router and latent attention), DBRX's
  // (moe_num_experts), Qwen2-MoE's gated shared expert. 0 or 1 expert is a dense MLP.
  const bool glm_moe = j.contains("model_type") && j["model_type"] == "glm4_moe";
  for (const char* key : {"n_routed_experts", "moe_num_experts"}) {
    if (glm_moe && std::string(key) == "n_routed_experts") continue;  // read_glm_moe
    // Compared unsigned: 2^64 - 1 experts read as int64_t wraps to -1, which passed as dense.
    if (present(key) && !(j[key].is_number_unsigned() && j[key].get<uint64_t>() <= 1)) {
      return Status::invalid(path + ": key \"" + key + "\": value " + short_dump(j[key]) +
                             " is a mixture of experts spplan cannot price yet (allowed: absent, null, 0 or 1; "
                             "experts as Mixtral's num_local_experts, Qwen3-MoE's num_experts or GLM-4.5's "
                             "n_routed_experts with model_type \"glm4_moe\")");
    }
  }
  if (present("shared_expert_intermediate_size") &&
      !(j["shared_expert_intermediate_size"].is_number_unsigned() && j["shared_expert_intermediate_size"].get<uint64_t>() == 0)) {
    return Status::invalid(path + ": key \"shared_expert_intermediate_size\": value " +
                           short_dump(j["shared_expert_intermediate_size"]) +
                           " is a shared expert, which spplan cannot price yet (allowed: absent, null or 0)");
  }
  // DeepSeek's multi-head latent attention: K and V come from a low-rank latent, not n_kv heads.
  if (present("kv_lora_rank")) {
    return Status::invalid(path + ": key \"kv_lora_rank\": value " + short_dump(j["kv_lora_rank"]) +
                           " is latent attention (MLA), which spplan cannot price (allowed: absent or null)");
  }
  // Gemma-2 caps attention scores and logits with tanh: FlashAttention-2 needs its softcap build,
  // and the capped logits are one more s x V tensor; neither is counted.
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    if (present(key)) {
      return Status::invalid(path + ": key \"" + key + "\": value " + short_dump(j[key]) +
                             " is logit soft-capping, which spplan cannot price (allowed: absent or null)");
    }
  }
  // gpt-oss's clamped SwiGLU is read with its model (read_gpt_oss); under another model type it
  // would come without the sinks and biases that go with it.
  const bool gpt_oss = j.contains("model_type") && j["model_type"] == "gpt_oss";
  if (!gpt_oss && present("swiglu_limit")) {
    return Status::invalid(path + ": key \"swiglu_limit\": value " + short_dump(j["swiglu_limit"]) +
                           " is gpt-oss's clamped SwiGLU under another model_type (allowed: absent, or model_type "
                           "\"gpt_oss\")");
  }
  // The MLP priced is gated (gate, up, down: SwiGLU). Gemma's gated GeLU (GeGLU) has the same
  // matrices and the same tensors alive, so it prices alike; a GeLU elsewhere may be ungated.
  const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  const bool gated_gelu_family = type.rfind("gemma", 0) == 0;
  for (const char* key : {"hidden_act", "hidden_activation"}) {
    if (!present(key)) continue;
    const bool silu = j[key] == "silu" || j[key] == "swish";
    const bool gated_gelu = gated_gelu_family && j[key].is_string() && j[key].get<std::string>().rfind("gelu", 0) == 0;
    if (!silu && !gated_gelu) {
      return Status::invalid(path + ": key \"" + key + "\": value " + short_dump(j[key]) +
                             " is an MLP spplan cannot price (allowed: \"silu\", or a gelu in a Gemma config)");
    }
  }
  return check_priced_family(path, j);
}

// The experts of a mixture (ModelSpec::num_experts): Mixtral's num_local_experts, whose experts are
// intermediate_size wide, or Qwen3-MoE's num_experts (num_local_experts as transformers 5 saves it)
// with moe_intermediate_size. What the
// costmodel does not price is refused: dense layers between MoE ones (decoder_sparse_step other
// than 1, mlp_only_layers), the router's input noise (router_jitter_noise). output_router_logits,
// the load-balancing loss's input, is read (memory_phases.cpp prices what it keeps).
Status read_moe(const std::string& path, const nlohmann::json& j, const std::string& type, ModelSpec* m) {
  const auto present = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
  const char* experts_key = present("num_local_experts") ? "num_local_experts" : "num_experts";
  if (!present(experts_key)) return Status::ok();
  if (present("num_local_experts") && present("num_experts")) {
    return Status::invalid(path + ": key \"num_experts\": given beside num_local_experts (allowed: one of them)");
  }
  if (j[experts_key] == 0) return Status::ok();  // no experts: the dense MLP
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, experts_key, -1, kMaxExperts, &m->num_experts));
  if (!m->is_moe()) return Status::ok();  // one expert is a dense MLP
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "num_experts_per_tok", -1, kMaxExperts, &m->experts_per_token));
  // Mixtral's experts are intermediate_size wide and its router always divides by the top-k's sum.
  // transformers 5 saves Qwen3-MoE's count as num_local_experts too (with moe_intermediate_size),
  // so the key alone does not say Mixtral.
  const bool mixtral = type == "mixtral" || (type != "qwen3_moe" && std::string(experts_key) == "num_local_experts");
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "moe_intermediate_size", mixtral ? m->intermediate_size : -1, kMaxDim,
                                  &m->moe_intermediate_size));
  if (present("decoder_sparse_step") && j["decoder_sparse_step"] != 1) {
    return json_bad_value(path, "decoder_sparse_step", j["decoder_sparse_step"],
                          "1: every layer a mixture; dense layers between them are not priced yet");
  }
  if (present("mlp_only_layers") && !(j["mlp_only_layers"].is_array() && j["mlp_only_layers"].empty())) {
    return json_bad_value(path, "mlp_only_layers", j["mlp_only_layers"],
                          "[]: every layer a mixture; dense layers between them are not priced yet");
  }
  SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "output_router_logits", &m->output_router_logits));
  // Qwen3MoeConfig reads norm_topk_prob (default false); MixtralTopKRouter always divides by the sum.
  m->norm_topk_prob = mixtral;
  if (!mixtral) SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "norm_topk_prob", &m->norm_topk_prob));
  SPPLAN_RETURN_IF_ERROR(json_nonnegative(path, j, "router_aux_loss_coef", &m->router_aux_loss_coef));
  if (present("router_jitter_noise") && !(j["router_jitter_noise"].is_number() && j["router_jitter_noise"] == 0)) {
    return json_bad_value(path, "router_jitter_noise", j["router_jitter_noise"],
                          "0: the router's noisy copy of its input is not priced");
  }
  return Status::ok();
}

// gpt-oss (transformers 5.24 modeling_gpt_oss.py): a sink logit per head (GptOssAttention.sinks),
// q/k/v/o biases (attention_bias: the o_proj's h a layer is not counted), every expert's SwiGLU
// clamped at swiglu_limit (GptOssExperts._apply_gate; 7.0 by GptOssConfig's default), biases on the
// router and the experts, and the router's softmax over its top k logits (GptOssTopKRouter). The
// MXFP4 weights of the Hub's checkpoints train dequantized to bf16 (Mxfp4Config(dequantize=True),
// OpenAI's fine-tuning cookbook): priced as bf16 parameters.
Status read_gpt_oss(const std::string& path, const nlohmann::json& j, ModelSpec* m) {
  if (!m->is_moe()) return json_bad_value(path, "num_local_experts", j.value("num_local_experts", nlohmann::json()), "2 or more");
  m->attention_sinks = true;
  m->expert_biases = true;
  m->router_softmax_after_topk = true;
  m->attention_bias = true;
  m->swiglu_limit = kGptOssSwigluLimit;
  return json_positive(path, j, "swiglu_limit", &m->swiglu_limit);
}

// An optional count that may be 0 (absent or null: `fallback`), up to `max`.
Status json_count(const std::string& path, const nlohmann::json& j, const char* key, int64_t fallback, int64_t max,
                  int64_t* out) {
  if (j.contains(key) && !j[key].is_null() && j[key].is_number_unsigned() && j[key].get<uint64_t>() == 0) {
    *out = 0;
    return Status::ok();
  }
  return json_int(path, j, key, fallback, max, out);
}

// GLM-4.5 and GLM-4.5-Air (transformers 5.24 modeling_glm4_moe.py, Glm4MoeConfig; docs/research/
// issue42-moe.md 1.4, 2.1): n_routed_experts experts of moe_intermediate_size, num_experts_per_tok
// of them a token; n_shared_experts more as one shared SwiGLU every token runs through; the first
// first_k_dense_replace layers dense (intermediate_size); a sigmoid router in fp32 that picks by
// score plus e_score_correction_bias (n_group and topk_group limit which experts it may pick, not
// what a step costs), divides by the top k's sum when norm_topk_prob and scales by
// routed_scaling_factor; no load-balancing loss (Glm4MoeForCausalLM computes none: the router
// logits it returns are not kept); partial_rotary_factor of each head rotated; use_qk_norm (GLM-4.5,
// not Air). The multi-token-prediction layers (num_nextn_predict_layers) are not built by
// transformers, so not trained or priced.
Status read_glm_moe(const std::string& path, const nlohmann::json& j, ModelSpec* m) {
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "n_routed_experts", -1, kMaxExperts, &m->num_experts));
  if (!m->is_moe()) return json_bad_value(path, "n_routed_experts", j["n_routed_experts"], "2 or more");
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "num_experts_per_tok", -1, kMaxExperts, &m->experts_per_token));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "moe_intermediate_size", -1, kMaxDim, &m->moe_intermediate_size));
  int64_t shared = kGlmSharedExperts;
  SPPLAN_RETURN_IF_ERROR(json_count(path, j, "n_shared_experts", kGlmSharedExperts, kMaxExperts, &shared));
  m->shared_expert_intermediate_size = shared * m->moe_intermediate_size;
  SPPLAN_RETURN_IF_ERROR(json_count(path, j, "first_k_dense_replace", kGlmFirstDenseLayers, kMaxLayers,
                                    &m->first_dense_layers));
  m->router_sigmoid = true;
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "n_group", 1, kMaxExperts, &m->router_groups));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "topk_group", 1, kMaxExperts, &m->router_topk_groups));
  SPPLAN_RETURN_IF_ERROR(json_positive(path, j, "routed_scaling_factor", &m->routed_scaling_factor));
  m->norm_topk_prob = true;  // Glm4MoeConfig's default
  SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "norm_topk_prob", &m->norm_topk_prob));
  SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "use_qk_norm", &m->qk_norm));
  SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "attention_bias", &m->attention_bias));
  m->partial_rotary_factor = kGlmPartialRotaryFactor;
  return Status::ok();
}

// A sliding window attends to fewer keys than the causal attention priced and run; it changes
// nothing while the sequence fits inside it, which check_plan (plan_rules.hpp) checks against seq.
// Qwen2 configs carry a window that use_sliding_window switches off; MistralConfig's window is 4096
// when config.json omits the key (transformers' default), null when it says null.
Status read_sliding_window(const std::string& path, const nlohmann::json& j, const std::string& type, ModelSpec* m) {
  const bool window_off = j.contains("use_sliding_window") && j["use_sliding_window"].is_boolean() &&
                          !j["use_sliding_window"].get<bool>();
  if (window_off) return Status::ok();
  constexpr int64_t kMistralDefaultWindow = 4096;  // transformers MistralConfig.sliding_window
  const int64_t fallback = type == "mistral" && !j.contains("sliding_window") ? kMistralDefaultWindow : 0;
  if (fallback == 0 && !(j.contains("sliding_window") && !j["sliding_window"].is_null())) return Status::ok();
  // Qwen2-style configs window only the layers from max_window_layers on (transformers Qwen2Config's
  // layer_types: "sliding_attention" when i >= max_window_layers): none past the last layer, all
  // from 0, the first ones full between.
  if (j.contains("max_window_layers") && !j["max_window_layers"].is_null()) {
    const auto& first = j["max_window_layers"];
    if (!first.is_number_unsigned()) return json_bad_value(path, "max_window_layers", first, "a whole number from 0");
    if (first.get<uint64_t>() >= static_cast<uint64_t>(m->num_hidden_layers)) return Status::ok();  // no windowed layer
    SPPLAN_RETURN_IF_ERROR(json_int(path, j, "sliding_window", fallback, kMaxDim, &m->sliding_window));
    if (m->sliding_window > 0) m->full_attention_layers = static_cast<int64_t>(first.get<uint64_t>());
    return Status::ok();
  }
  return json_int(path, j, "sliding_window", fallback, kMaxDim, &m->sliding_window);
}

// Which layers attend over the window: transformers' layer_types ("sliding_attention" or
// "full_attention", one a layer: Gemma 3, gpt-oss, Qwen2 saved by transformers 5), or Gemma 3's
// older sliding_window_pattern p (every p-th layer full: Gemma3TextConfig's layer_types rule). A
// window with neither: every layer (Mistral). Layer types without a window are one line.
Status read_layer_types(const std::string& path, const nlohmann::json& j, ModelSpec* m) {
  const bool has_types = j.contains("layer_types") && !j["layer_types"].is_null();
  const bool has_pattern = j.contains("sliding_window_pattern") && !j["sliding_window_pattern"].is_null();
  if (!has_types && !has_pattern) return Status::ok();
  const char* key = has_types ? "layer_types" : "sliding_window_pattern";
  int64_t full = 0;
  if (has_types) {
    const nlohmann::json& types = j["layer_types"];
    if (!types.is_array() || static_cast<int64_t>(types.size()) != m->num_hidden_layers) {
      return json_bad_value(path, key, types,
                            "a list of num_hidden_layers (" + std::to_string(m->num_hidden_layers) +
                                ") \"sliding_attention\" or \"full_attention\"");
    }
    for (const auto& type : types) {
      if (type != "full_attention" && type != "sliding_attention") {
        return Status::invalid(path + ": key \"layer_types\": value " + short_dump(type) +
                               " is an attention spplan cannot price (allowed: \"full_attention\", \"sliding_attention\")");
      }
      full += type == "full_attention" ? 1 : 0;
    }
  } else {
    int64_t pattern = 0;
    SPPLAN_RETURN_IF_ERROR(json_int(path, j, key, -1, kMaxLayers, &pattern));
    full = m->num_hidden_layers / pattern;
  }
  if (full == m->num_hidden_layers) {
    m->sliding_window = 0;  // no layer reads the window
    return Status::ok();
  }
  // Windowed layers without a window: layer types naming any, or a pattern leaving full layers among them.
  if (m->sliding_window == 0 && (has_types || full > 0)) {
    return json_bad_value(path, key, j[key],
                          has_types ? "\"full_attention\" only, or a sliding_window for its \"sliding_attention\" layers"
                                    : "absent, or a sliding_window for the layers it windows");
  }
  m->full_attention_layers = full;
  return Status::ok();
}

// tie_word_embeddings when a config.json omits it: the default of the family's transformers
// config class (PretrainedConfig: False; GemmaConfig, Gemma2Config, Gemma3TextConfig: True).
bool family_ties_embeddings(const nlohmann::json& j) {
  if (!j.contains("model_type") || !j["model_type"].is_string()) return false;
  const std::string type = j["model_type"].get<std::string>();
  return type == "gemma" || type == "gemma2" || type == "gemma3" || type == "gemma3_text";
}

// An optional string key; absent, null and "" leave *out empty.
Status json_string(const std::string& path, const nlohmann::json& j, const char* key, std::string* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::ok();
  if (!j[key].is_string()) return json_bad_value(path, key, j[key], "a string");
  *out = j[key].get<std::string>();
  return Status::ok();
}

// The model's name: model_name.hpp's rule, from the top level (a multimodal config's text_config
// holds its own, often empty, _name_or_path).
Result<std::string> json_model_name(const std::string& path, const nlohmann::json& j) {
  std::string name, name_or_path;
  SPPLAN_RETURN_IF_ERROR(json_string(path, j, "name", &name));
  SPPLAN_RETURN_IF_ERROR(json_string(path, j, "_name_or_path", &name_or_path));
  return config_model_name(path, name, name_or_path);
}

Result<ModelSpec> model_from_json(const std::string& path) {
  SPPLAN_ASSIGN_OR_RETURN(nlohmann::json j, read_json_object(path));
  SPPLAN_ASSIGN_OR_RETURN(const std::string name, json_model_name(path, j));
  // Multimodal configs nest the language model (text_config): plan it, with the encoders beside it
  // counted where their modeling was read (read_multimodal_encoders, once the text width is read).
  const nlohmann::json whole = j;
  if (j.contains("text_config") && j["text_config"].is_object()) j = nlohmann::json(whole["text_config"]);
  SPPLAN_RETURN_IF_ERROR(check_priceable(path, j));
  ModelSpec m;
  m.tie_word_embeddings = family_ties_embeddings(j);
  m.name = name;
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "num_hidden_layers", -1, kMaxLayers, &m.num_hidden_layers));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "hidden_size", -1, kMaxDim, &m.hidden_size));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "num_attention_heads", -1, kMaxHeads, &m.num_attention_heads));
  SPPLAN_RETURN_IF_ERROR(
      json_int(path, j, "num_key_value_heads", m.num_attention_heads, kMaxHeads, &m.num_key_value_heads));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "head_dim", m.hidden_size / m.num_attention_heads, kMaxHeads, &m.head_dim));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "intermediate_size", -1, kMaxDim, &m.intermediate_size));
  SPPLAN_RETURN_IF_ERROR(json_int(path, j, "vocab_size", -1, kMaxDim, &m.vocab_size));
  SPPLAN_RETURN_IF_ERROR(json_bool(path, j, "tie_word_embeddings", &m.tie_word_embeddings));
  const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  m.qk_norm = has_qk_norm(type);
  m.sandwich_norms = has_sandwich_norms(type);
  // Qwen2's attention has q/k/v biases by construction (Qwen2Attention: bias=True), no key says so.
  m.attention_bias = type == "qwen2";
  SPPLAN_RETURN_IF_ERROR(read_sliding_window(path, j, type, &m));
  SPPLAN_RETURN_IF_ERROR(read_layer_types(path, j, &m));
  if (type == "glm4_moe") {
    SPPLAN_RETURN_IF_ERROR(read_glm_moe(path, j, &m));
  } else {
    SPPLAN_RETURN_IF_ERROR(read_moe(path, j, type, &m));
  }
  if (type == "gpt_oss") SPPLAN_RETURN_IF_ERROR(read_gpt_oss(path, j, &m));
  SPPLAN_RETURN_IF_ERROR(read_rope_config(path, j, &m));
  SPPLAN_RETURN_IF_ERROR(json_positive(path, j, "rms_norm_eps", &m.rms_norm_eps));
  SPPLAN_RETURN_IF_ERROR(read_multimodal_encoders(path, whole, &m));
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
  if (std::filesystem::path(path).extension() == ".json") return model_from_json(path);
  SPPLAN_ASSIGN_OR_RETURN(const toml::table table, parse_toml_file(path));
  return model_from_toml(path, table);
}

Result<ModelSpec> model_from_table(const std::string& source, const toml::table& table) {
  return model_from_toml(source, table);
}

std::vector<std::string> model_presets() { return list_presets("models"); }

Result<std::string> model_file(std::string_view name_or_path) { return resolve_model(name_or_path, "--model"); }

}  // namespace spplan
