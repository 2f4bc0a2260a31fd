// What a model's family (its transformers model_type) says that its config file may leave out,
// read from transformers 5.24's modeling and config classes, and the limits every model file is
// held to. Model TOML files and config.json files (model_loader.cpp, config_json_loader.cpp) read
// these, so a family's facts are written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spplan {

// The same limits for TOML files and config.json: a simulated step walks every layer and head.
inline constexpr int64_t kMaxDim = int64_t{1} << 40;
inline constexpr int64_t kMaxLayers = 10000;  // Llama-3.1-405B has 126; a simulated step walks every layer
inline constexpr int64_t kMaxHeads = int64_t{1} << 20;
inline constexpr int64_t kMaxExperts = int64_t{1} << 20;  // the costmodel prices one GEMM launch per expert

inline constexpr double kGptOssSwigluLimit = 7.0;  // transformers' GptOssConfig default swiglu_limit
// transformers 5.24's Glm4MoeConfig defaults, for a config.json (or a TOML of model_type "glm4_moe")
// that leaves a key out.
inline constexpr int64_t kGlmSharedExperts = 1;         // n_shared_experts
inline constexpr int64_t kGlmFirstDenseLayers = 1;      // first_k_dense_replace
inline constexpr double kGlmPartialRotaryFactor = 0.5;  // partial_rotary_factor

// Families whose attention normalises q and k per head (HF Qwen3 and Gemma 3 modeling).
bool has_qk_norm(const std::string& model_type);
// Gemma 2's and 3's decoder layers (Gemma3DecoderLayer: pre_feedforward_layernorm and
// post_feedforward_layernorm beside Llama's two; Gemma 2's likewise).
bool has_sandwich_norms(const std::string& model_type);
// tie_word_embeddings when a config omits it: the default of the family's transformers config
// class (PretrainedConfig: False; GemmaConfig, Gemma2Config, Gemma3TextConfig: True).
bool family_ties_embeddings(const std::string& model_type);

// Whether transformers' AutoModelForCausalLM builds a config of this top-level model_type: every
// text family; of the multimodal ones (a config with text_config) only those whose
// ForConditionalGeneration class transformers 5.24 also maps there (modeling_auto.py
// MODEL_FOR_CAUSAL_LM_MAPPING_NAMES: gemma3, gemma3n, gemma4). Mistral 3, LLaVA and Qwen2-VL load
// through AutoModelForImageTextToText only.
bool causal_lm_class(const std::string& model_type, bool multimodal);

// The families whose decoder layer is the one the costmodel prices (config_json_loader.cpp says
// which are left out, and why).
const std::vector<std::string>& priced_model_types();

}  // namespace spplan
