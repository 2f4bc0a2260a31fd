// The limits every model file is held to, which families spplan prices and which of them
// transformers' causal-LM class builds. What each family fills in for a key its file leaves out,
// and the parts of its layers no key names, are records in family_defaults.hpp. Model TOML files
// and config.json files (model_loader.cpp, config_json_loader.cpp) read both, so a family's facts
// are written once.
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

// Whether transformers' AutoModelForCausalLM builds a config of this top-level model_type: every
// text family; of the multimodal ones (a config with text_config) only those whose
// ForConditionalGeneration class transformers 5.24 also maps there (modeling_auto.py
// MODEL_FOR_CAUSAL_LM_MAPPING_NAMES: gemma3, gemma3n, gemma4). Mistral 3, LLaVA and Qwen2-VL load
// through AutoModelForImageTextToText only.
bool causal_lm_class(const std::string& model_type, bool multimodal);

// The families whose decoder layer is the one the costmodel prices, those with a record in
// family_defaults.hpp (model_families.cpp says which are left out, and why).
const std::vector<std::string>& priced_model_types();

}  // namespace spplan
