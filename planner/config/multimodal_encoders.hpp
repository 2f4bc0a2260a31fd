// The encoders a multimodal config.json holds beside its language model (text_config), counted in
// parameters: the vision towers and projectors of the families whose modeling was read, Gemma 3's
// (SigLIP) and Mistral 3's (Pixtral). A text-only step never runs them, but trained (transformers
// leaves every parameter trainable) they hold weights, gradients and optimizer state like the
// language model's (ModelSpec::encoder_params).
#pragma once

#include <string>

#include "planner/config/config_keys.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

// Sets m->encoder_params from `top`, a multimodal config.json (its language model in a text_config
// object, still inside), and m->encoders_left_out where it holds an encoder not counted (another
// tower, an audio encoder, or one whose modeling was not read).
// A bad dimension is one line naming the file and the nested key ("vision_config.hidden_size").
Status read_multimodal_encoders(const ConfigKeys& top, ModelSpec* m);

}  // namespace spplan
