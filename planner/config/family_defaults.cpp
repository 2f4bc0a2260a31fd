#include "planner/config/family_defaults.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace spplan {
namespace {

using Json = nlohmann::json;

// Each family's defaults as transformers 5.24.0's config class holds them (the dataclass fields of
// configuration_<family>.py; rope_theta is the class's default_theta). A default of None there
// (LlamaConfig's num_key_value_heads and head_dim, MixtralConfig's sliding_window) is left out:
// the reader's rule gives what the class's __post_init__ or modeling derives.
ModelFamily record(std::string model_type, Json defaults) {
  ModelFamily family;
  family.model_type = std::move(model_type);
  family.defaults = std::move(defaults);
  return family;
}

std::vector<ModelFamily> build_families() {
  std::vector<ModelFamily> f;
  // LlamaConfig: Llama 2 7B's shapes.
  f.push_back(record("llama",
               {{"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                {"intermediate_size", 11008}, {"vocab_size", 32000}, {"tie_word_embeddings", false},
                {"rope_theta", 10000.0}, {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 2048},
                {"attention_bias", false}}));
  // MistralConfig (Mistral 7B v0.1): every layer windowed at 4096. MistralAttention has no bias key.
  const Json mistral = {{"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                        {"num_key_value_heads", 8}, {"intermediate_size", 14336}, {"vocab_size", 32000},
                        {"tie_word_embeddings", false}, {"rope_theta", 10000.0}, {"rms_norm_eps", 1e-6},
                        {"max_position_embeddings", 131072}, {"sliding_window", 4096}};
  f.push_back(record("mistral", mistral));
  // MinistralConfig: Mistral's defaults; its layer_types, when absent, window every layer.
  f.push_back(record("ministral", mistral));
  // MixtralConfig: no window (sliding_window None); 8 experts, 2 a token.
  f.push_back(record("mixtral",
               {{"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                {"num_key_value_heads", 8}, {"intermediate_size", 14336}, {"vocab_size", 32000},
                {"tie_word_embeddings", false}, {"rope_theta", 1000000.0}, {"rms_norm_eps", 1e-5},
                {"max_position_embeddings", 131072}, {"num_local_experts", 8}, {"num_experts_per_tok", 2},
                {"router_aux_loss_coef", 0.001}, {"output_router_logits", false}}));
  // Qwen2Config: sliding_window is None unless use_sliding_window, and then windows the layers from
  // max_window_layers on. No head_dim key (Qwen2Attention: hidden / heads).
  Json qwen2 = {{"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
                {"num_key_value_heads", 32}, {"intermediate_size", 22016}, {"vocab_size", 151936},
                {"tie_word_embeddings", false}, {"rope_theta", 10000.0}, {"rms_norm_eps", 1e-6},
                {"max_position_embeddings", 32768}, {"use_sliding_window", false}, {"sliding_window", 4096},
                {"max_window_layers", 28}};
  f.push_back(record("qwen2", qwen2));
  f.back().qkv_bias = true;
  // Qwen3Config: Qwen2Config's, with head_dim 128 whatever hidden / heads is, and attention_bias.
  Json qwen3 = qwen2;
  qwen3["head_dim"] = 128;
  qwen3["attention_bias"] = false;
  f.push_back(record("qwen3", qwen3));
  f.back().qk_norm = true;
  // Qwen3MoeConfig (Qwen3-30B-A3B's shapes): no max_window_layers (a window covers every layer),
  // no head_dim (hidden / heads), norm_topk_prob false.
  f.push_back(record("qwen3_moe",
               {{"num_hidden_layers", 24}, {"hidden_size", 2048}, {"num_attention_heads", 32},
                {"num_key_value_heads", 4}, {"intermediate_size", 6144}, {"vocab_size", 151936},
                {"tie_word_embeddings", false}, {"rope_theta", 10000.0}, {"rms_norm_eps", 1e-6},
                {"max_position_embeddings", 32768}, {"attention_bias", false}, {"use_sliding_window", false},
                {"sliding_window", 4096}, {"num_experts", 128}, {"num_experts_per_tok", 8},
                {"moe_intermediate_size", 768}, {"norm_topk_prob", false}, {"router_aux_loss_coef", 0.001},
                {"output_router_logits", false}}));
  f.back().qk_norm = true;
  // Glm4MoeConfig (GLM-4.5-Air's shapes; no head_dim key: hidden / heads). partial_rotary_factor
  // 0.5 is set in its __post_init__ "for BC".
  f.push_back(record("glm4_moe",
                  {{"num_hidden_layers", 46}, {"hidden_size", 4096}, {"num_attention_heads", 96},
                   {"num_key_value_heads", 8}, {"intermediate_size", 10944}, {"vocab_size", 151552},
                   {"tie_word_embeddings", false}, {"rope_theta", 10000.0}, {"rms_norm_eps", 1e-5},
                   {"max_position_embeddings", 131072}, {"attention_bias", false}, {"n_routed_experts", 128},
                   {"num_experts_per_tok", 8}, {"moe_intermediate_size", 1408}, {"n_shared_experts", 1},
                   {"first_k_dense_replace", 1}, {"n_group", 1}, {"topk_group", 1},
                   {"routed_scaling_factor", 1.0}, {"norm_topk_prob", true}, {"use_qk_norm", false},
                   {"output_router_logits", false}, {"partial_rotary_factor", 0.5}}));
  f.back().router_sigmoid = true;
  // GptOssConfig (gpt-oss-120b's shapes): every other layer windowed at 128 (the first), YaRN.
  f.push_back(record("gpt_oss",
                  {{"num_hidden_layers", 36}, {"hidden_size", 2880}, {"num_attention_heads", 64},
                   {"num_key_value_heads", 8}, {"head_dim", 64}, {"intermediate_size", 2880},
                   {"vocab_size", 201088}, {"tie_word_embeddings", false}, {"rope_theta", 150000.0},
                   {"rms_norm_eps", 1e-5}, {"max_position_embeddings", 131072}, {"attention_bias", true},
                   {"sliding_window", 128}, {"num_local_experts", 128}, {"num_experts_per_tok", 4},
                   {"router_aux_loss_coef", 0.001}, {"output_router_logits", false}, {"swiglu_limit", 7.0},
                   {"rope_scaling",
                    {{"rope_type", "yarn"}, {"factor", 32.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
                     {"truncate", false}, {"original_max_position_embeddings", 4096}}}}));
  f.back().full_attention_every = 2;
  f.back().gpt_oss_parts = true;
  // GemmaConfig (Gemma 7B's shapes): tied embeddings.
  f.push_back(record("gemma",
               {{"num_hidden_layers", 28}, {"hidden_size", 3072}, {"num_attention_heads", 16},
                {"num_key_value_heads", 16}, {"head_dim", 256}, {"intermediate_size", 24576},
                {"vocab_size", 256000}, {"tie_word_embeddings", true}, {"rope_theta", 10000.0},
                {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 8192}, {"attention_bias", false}}));
  // Gemma2Config (Gemma 2 2B's shapes): every other layer windowed (the first), soft-capped
  // attention and logits unless the config says null (which spplan refuses to price otherwise).
  f.push_back(record("gemma2",
               {{"num_hidden_layers", 26}, {"hidden_size", 2304}, {"num_attention_heads", 8},
                {"num_key_value_heads", 4}, {"head_dim", 256}, {"intermediate_size", 9216},
                {"vocab_size", 256000}, {"tie_word_embeddings", true}, {"rope_theta", 10000.0},
                {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 8192}, {"attention_bias", false},
                {"sliding_window", 4096}, {"attn_logit_softcapping", 50.0}, {"final_logit_softcapping", 30.0}}));
  f.back().full_attention_every = 2;
  f.back().sandwich_norms = true;
  // Gemma3Config builds its text_config as a Gemma3TextConfig (none: every default).
  f.push_back(record("gemma3", Json::object()));
  f.back().text_model_type = "gemma3_text";
  f.back().vision_model_type = "siglip_vision_model";  // its sub_configs_defaults' vision_config
  // Gemma3TextConfig (Gemma 3 1B-like shapes): five windowed layers to one full
  // (sliding_window_pattern 6); rope_theta is its full layers' (default_theta "global"; the windowed
  // layers' 10000 is not a ModelSpec field).
  f.push_back(record("gemma3_text",
               {{"num_hidden_layers", 26}, {"hidden_size", 2304}, {"num_attention_heads", 8},
                {"num_key_value_heads", 4}, {"head_dim", 256}, {"intermediate_size", 9216},
                {"vocab_size", 262208}, {"tie_word_embeddings", true}, {"rope_theta", 1000000.0},
                {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 131072}, {"attention_bias", false},
                {"sliding_window", 4096}}));
  f.back().full_attention_every = 6;
  f.back().qk_norm = true;
  f.back().sandwich_norms = true;
  return f;
}

// Keys transformers reads under two names: a default under one is not added beside the other.
const std::pair<const char*, const char*> kSpellings[] = {{"num_experts", "num_local_experts"},
                                                          {"rope_scaling", "rope_parameters"}};

// Keys whose null transformers reads as None with a meaning of its own (no window, head_dim
// hidden / heads, as many kv heads as heads, no soft-capping, no RoPE scaling, no context known):
// null stays null. Any other null is the default, as a key absent (ConfigKeys' rule).
bool null_means_none(const std::string& key) {
  static const char* const kKeys[] = {"sliding_window",          "head_dim",     "num_key_value_heads",
                                      "attn_logit_softcapping",  "rope_scaling", "max_position_embeddings",
                                      "final_logit_softcapping"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; });
}

bool holds_spelling_of(const Json& object, const std::string& key) {
  if (object.contains(key) && object[key].is_null() && !null_means_none(key)) return false;
  if (object.contains(key)) return true;
  for (const auto& [a, b] : kSpellings) {
    if ((key == a && object.contains(b)) || (key == b && object.contains(a))) return true;
  }
  return false;
}

}  // namespace

const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = build_families();
  return families;
}

const ModelFamily* find_family(const std::string& model_type) {
  const auto& families = model_families();
  const auto it = std::find_if(families.begin(), families.end(),
                               [&](const ModelFamily& f) { return f.model_type == model_type; });
  return it == families.end() ? nullptr : &*it;
}

Json with_family_defaults(const Json& object, const ModelFamily& family) {
  Json filled = object.is_object() ? object : Json::object();
  for (const auto& [key, value] : family.defaults.items()) {
    if (!holds_spelling_of(filled, key)) filled[key] = value;
  }
  return filled;
}

bool family_flag(const ModelFamily* family, const std::string& key, bool fallback) {
  if (family == nullptr || !family->defaults.contains(key)) return fallback;
  return family->defaults[key].get<bool>();
}

double family_number(const ModelFamily* family, const std::string& key, double fallback) {
  if (family == nullptr || !family->defaults.contains(key)) return fallback;
  return family->defaults[key].get<double>();
}

}  // namespace spplan
