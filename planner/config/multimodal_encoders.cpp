#include "planner/config/multimodal_encoders.hpp"

#include <cstdint>

#include "planner/config/family_defaults.hpp"

namespace spplan {
namespace {

constexpr int64_t kMaxEncoderDim = int64_t{1} << 24;  // far past any tower's width or image side
constexpr int64_t kMaxEncoderLayers = 10000;

// A tower's dimension: a whole number in [1, max], absent or null the config class's default.
Status dimension(const ConfigKeys& keys, const char* key, int64_t fallback, int64_t max, double* out) {
  int64_t value = 0;
  SPPLAN_RETURN_IF_ERROR(keys.whole(key, fallback, max, &value));
  *out = static_cast<double>(value);
  return Status::ok();
}

// SigLIP's vision tower (transformers modeling_siglip.py SiglipVisionTransformer; the defaults are
// SiglipVisionConfig's): a biased conv patch embedding, a learned position per patch, layers of two
// LayerNorms, biased q, k, v, out and a biased fc1/fc2 MLP, a final LayerNorm, and, with
// vision_use_head, the attention-pooling head (a probe, a packed in-projection, out-projection,
// LayerNorm and MLP). `width` receives the tower's hidden size, which its projector maps from.
Status siglip_params(const ConfigKeys& v, double* out, double* width) {
  double h = 0, i = 0, layers = 0, channels = 0, image = 0, patch = 0;
  SPPLAN_RETURN_IF_ERROR(dimension(v, "hidden_size", 768, kMaxEncoderDim, &h));
  *width = h;
  SPPLAN_RETURN_IF_ERROR(dimension(v, "intermediate_size", 3072, kMaxEncoderDim, &i));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "num_hidden_layers", 12, kMaxEncoderLayers, &layers));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "num_channels", 3, kMaxEncoderDim, &channels));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "image_size", 224, kMaxEncoderDim, &image));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "patch_size", 16, kMaxEncoderDim, &patch));
  bool head = true;  // SiglipVisionConfig.vision_use_head
  SPPLAN_RETURN_IF_ERROR(v.flag("vision_use_head", &head));
  const double side = static_cast<double>(static_cast<int64_t>(image) / static_cast<int64_t>(patch));  // image // patch
  const double embeddings = channels * patch * patch * h + h + side * side * h;
  const double layer = 4 * h * h + 2 * h * i + 9 * h + i;  // 4 (h^2 + h) + (h i + i) + (i h + h) + 2 x 2h
  const double pooling = head ? 4 * h * h + 2 * h * i + 8 * h + i : 0.0;  // probe h, (3h^2 + 3h) + (h^2 + h), 2h, MLP
  *out = embeddings + layers * layer + 2 * h + pooling;
  return Status::ok();
}

// Pixtral's vision tower (modeling_pixtral.py PixtralVisionModel; PixtralVisionConfig's defaults):
// an unbiased conv patch embedding, an RMSNorm before the layers, layers of two RMSNorms, unbiased
// q, k, v, o and a gated MLP (gate, up, down); 2D RoPE, no position weights. `width` as siglip_params'.
Status pixtral_params(const ConfigKeys& v, double* out, double* width) {
  double h = 0, i = 0, layers = 0, channels = 0, patch = 0;
  SPPLAN_RETURN_IF_ERROR(dimension(v, "hidden_size", 1024, kMaxEncoderDim, &h));
  *width = h;
  SPPLAN_RETURN_IF_ERROR(dimension(v, "intermediate_size", 4096, kMaxEncoderDim, &i));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "num_hidden_layers", 24, kMaxEncoderLayers, &layers));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "num_channels", 3, kMaxEncoderDim, &channels));
  SPPLAN_RETURN_IF_ERROR(dimension(v, "patch_size", 16, kMaxEncoderDim, &patch));
  *out = channels * patch * patch * h + h + layers * (4 * h * h + 3 * h * i + 2 * h);
  return Status::ok();
}

// Gemma 3's projector (modeling_gemma3.py Gemma3MultiModalProjector): an RMSNorm over the tower's
// width and one [h_vision, h_text] matrix.
double gemma3_projector_params(double vision_h, double text_h) { return vision_h + vision_h * text_h; }

// Mistral 3's projector (modeling_mistral3.py Mistral3MultiModalProjector; Mistral3Config's
// defaults): an RMSNorm, the patch merger's [h_v s^2 -> h_v] matrix, linear_1 from the tower's
// width times its feature layers to the text width and linear_2 text to text, biased with
// multimodal_projector_bias.
Status mistral3_projector_params(const ConfigKeys& top, double vision_h, double text_h, double* out) {
  double merge = 0;
  SPPLAN_RETURN_IF_ERROR(dimension(top, "spatial_merge_size", 2, kMaxEncoderDim, &merge));
  bool bias = false;  // Mistral3Config.multimodal_projector_bias
  SPPLAN_RETURN_IF_ERROR(top.flag("multimodal_projector_bias", &bias));
  const nlohmann::json layers = top.json().value("vision_feature_layer", nlohmann::json(-1));
  const double features = layers.is_array() && !layers.empty() ? static_cast<double>(layers.size()) : 1.0;
  *out = vision_h + vision_h * merge * merge * vision_h + vision_h * features * text_h + text_h * text_h +
         (bias ? 2 * text_h : 0.0);
  return Status::ok();
}

}  // namespace

Status read_multimodal_encoders(const ConfigKeys& top, ModelSpec* m) {
  m->encoder_params = 0;
  m->encoders_left_out = false;
  const std::string family = top.model_type();
  const ConfigKeys vision = top.nested("vision_config");
  // A vision_config naming no model_type (or none at all) is the tower its family's class builds.
  const ModelFamily* record = find_family(family);
  const std::string tower_type =
      vision.present("model_type") || record == nullptr ? vision.model_type() : record->vision_model_type;
  const double text_h = static_cast<double>(m->hidden_size);
  double tower = 0, vision_h = 0, projector = 0;
  if (family == "gemma3" && tower_type == "siglip_vision_model") {
    SPPLAN_RETURN_IF_ERROR(siglip_params(vision, &tower, &vision_h));
    projector = gemma3_projector_params(vision_h, text_h);
  } else if (family == "mistral3" && tower_type == "pixtral") {
    SPPLAN_RETURN_IF_ERROR(pixtral_params(vision, &tower, &vision_h));
    SPPLAN_RETURN_IF_ERROR(mistral3_projector_params(top, vision_h, text_h, &projector));
  } else {
    m->encoders_left_out = true;  // a tower or projector whose modeling was not read, or none named
    return Status::ok();
  }
  m->encoder_params = tower + projector;
  // Another encoder beside the one counted (an audio tower) is named, not counted.
  m->encoders_left_out = top.present("audio_config") && top.json()["audio_config"].is_object();
  return Status::ok();
}

}  // namespace spplan
