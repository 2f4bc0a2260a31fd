// RoPE scaling read from a Hugging Face config (RopeScaling in model_spec.hpp).
//
// transformers 4 writes `"rope_theta": T, "rope_scaling": {"rope_type" (or "type"): ..., keys}` (null:
// none); transformers 5 writes `"rope_parameters": {"rope_type": ..., "rope_theta": T, keys}`. Both
// give the same RopeScaling. Keys each type reads (modeling_rope_utils.py), required unless noted:
//   linear   factor
//   dynamic  factor (and the config's max_position_embeddings)
//   yarn     factor; original_max_position_embeddings (absent: max_position_embeddings),
//            optional attention_factor, beta_fast, beta_slow, mscale, mscale_all_dim, truncate
//   llama3   factor, low_freq_factor, high_freq_factor, original_max_position_embeddings
// Other keys in the object are ignored, as transformers ignores them; partial_rotary_factor (the
// share of each head rotated, in (0, 1]) is read at the top level (transformers 4) or inside the
// object (transformers 5). Errors name the file, the key and the value.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/config/config_keys.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

// Reads rope_theta, max_position_embeddings, partial_rotary_factor and the scaling of the config
// object `c` (a config.json's top level or its text_config) into `m`.
Status read_rope_config(const ConfigKeys& c, ModelSpec* m);

// "llama3 (factor 8, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192)";
// "default" without scaling. The planner's report prints it.
std::string rope_text(const RopeScaling& rope);

// The scaling as a JSON object in transformers 4's "rope_scaling" form; null for default. Plan
// files and exported config.json files write it.
nlohmann::json rope_scaling_json(const RopeScaling& rope);

}  // namespace spplan
