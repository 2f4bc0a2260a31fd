// The families spplan prices, each as a record: what its transformers config class fills in for a
// key its config.json leaves out, and the parts of its layers that no key names (q/k norms, four
// norms a layer, Qwen2's q/k/v biases, gpt-oss's sinks, GLM's sigmoid router). Read from
// transformers 5.24.0 (models/<family>/configuration_<family>.py and modeling_<family>.py there);
// tests/scripts/family_defaults_test.py checks every value against that release's AutoConfig.
//
// Both readers take these: a config.json (config_json_loader.cpp) takes every default where it
// omits the key; a model TOML file (model_loader.cpp) states its shapes, window and context itself
// and takes the rest: the family's parts, tying, biases and the mixture's and router's settings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spplan {

struct ModelFamily {
  std::string model_type;
  // config.json key -> the config class's default. A key left out here is one whose default the
  // reader derives as the class does: num_key_value_heads = num_attention_heads, head_dim =
  // hidden_size / num_attention_heads, no window.
  nlohmann::json defaults;
  // Which layers keep full attention when a config has no layer_types: layer i when
  // (i + 1) % n == 0 (Gemma 2 and gpt-oss alternate, n = 2; Gemma 3's sliding_window_pattern, 6
  // unless the config says). 0: every layer alike (Mistral windows all; Qwen2 from max_window_layers).
  int64_t full_attention_every = 0;
  bool qk_norm = false;         // per-head RMSNorm on q and k (Qwen3, Qwen3-MoE, Gemma 3)
  bool sandwich_norms = false;  // four RMSNorms a layer (Gemma 2 and 3)
  bool qkv_bias = false;        // q/k/v biases whatever attention_bias says (Qwen2Attention: bias=True)
  // gpt-oss: a sink logit per head, biased experts and router, softmax over the top k only.
  bool gpt_oss_parts = false;
  bool router_sigmoid = false;  // GLM-4.5's sigmoid router (Glm4MoeTopkRouter)
  // A multimodal family: the class its text_config is read as where that names no model_type, and
  // the default text model where the config has none (Gemma3Config: Gemma3TextConfig); the vision
  // tower's model_type where vision_config names none (Gemma3Config: SigLIP's).
  std::string text_model_type;
  std::string vision_model_type;
};

// The record of `model_type`; nullptr for a family spplan has not read.
const ModelFamily* find_family(const std::string& model_type);

// Every family with a record, in the order messages list them.
const std::vector<ModelFamily>& model_families();

// `object` (a config.json's top level or its text_config; null reads as {}) with each of the
// family's defaults it does not hold added, or holds as null. Where transformers reads a None as a
// meaning of its own the null stays: "sliding_window": null has no window, a null head_dim or
// num_key_value_heads is derived, a null soft-cap or rope_scaling is none, a null
// max_position_embeddings is no context known. A default is not added
// where the object spells the key another way transformers reads (num_local_experts for
// num_experts, rope_parameters for rope_scaling).
nlohmann::json with_family_defaults(const nlohmann::json& object, const ModelFamily& family);

// The family's default for `key` (nullptr: `fallback`), for a model TOML file's keys.
bool family_flag(const ModelFamily* family, const std::string& key, bool fallback);
double family_number(const ModelFamily* family, const std::string& key, double fallback);

}  // namespace spplan
