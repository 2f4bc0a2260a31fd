// A Hugging Face config.json -> ModelSpec, read as transformers reads it: the architecture keys
// are read, the rest (architectures, torch_dtype, ...) ignored; a key absent takes its family's
// transformers default (family_defaults.hpp), and a file naming no family is read only when it
// holds nothing but keys spplan prices. A multimodal config plans its language model
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
