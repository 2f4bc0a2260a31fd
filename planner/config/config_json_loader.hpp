// A Hugging Face config.json -> ModelSpec, read as transformers reads it: the architecture keys
// are required, the rest (architectures, torch_dtype, ...) ignored; a key absent or null takes the
// family's default (model_families.hpp). A multimodal config plans its language model
// (text_config) with the encoders beside it counted (multimodal_encoders.hpp); its keys are named
// "text_config.KEY" in messages. What the costmodel cannot price (a family whose layers were not
// read, latent attention, a shared expert outside GLM, soft-capping) is refused, not guessed.
#pragma once

#include <string>

#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

Result<ModelSpec> model_from_config_json(const std::string& path);

}  // namespace spplan
