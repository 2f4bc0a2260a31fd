#include "planner/config/model_families.hpp"

#include "planner/config/family_defaults.hpp"

namespace spplan {

bool causal_lm_class(const std::string& model_type, bool multimodal) {
  return !multimodal || model_type == "gemma3" || model_type == "gemma3n" || model_type == "gemma4";
}

// Read from their transformers modeling files (attention over q, k, v heads, a gated MLP or the
// mixtures config_json_loader.cpp reads, two or four RMSNorms; Ministral is Mistral's layer with
// layer_types). Not Phi-3, whose FLOPs are these but whose fused qkv_proj output stays alive whole
// behind the v view attention saves, which the activations priced do not hold. Another family's
// config may hold layers no key names (Llama 4's shared expert beside its routed one and its
// chunked attention, Jamba's and Nemotron-H's Mamba layers, Gemma 3n's per-layer inputs): priced
// as this decoder it would be confidently wrong, so it is refused, and a model TOML file
// (configs/models/) states the shapes of a family whose layers are these.
const std::vector<std::string>& priced_model_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (const ModelFamily& family : model_families()) names.push_back(family.model_type);
    return names;
  }();
  return types;
}

}  // namespace spplan
