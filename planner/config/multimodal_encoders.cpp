#include "planner/config/multimodal_encoders.hpp"

#include <cstdint>
#include <utility>

namespace spplan {
namespace {

constexpr int64_t kMaxEncoderDim = int64_t{1} << 24;  // far past any tower's width or image side
constexpr int64_t kMaxEncoderLayers = 10000;

// The keys of one object of a config.json (the whole config, or its "vision_config"), read as
// transformers' config class reads them: absent or null is the class's default.
class Section {
 public:
  // `prefix` names the object in messages: "" for the top level, "vision_config." for the tower's.
  Section(const std::string& path, const nlohmann::json& object, std::string prefix)
      : path_(path), prefix_(std::move(prefix)), json_(object.is_object() ? object : nlohmann::json()) {}

  bool present() const { return json_.is_object(); }
  std::string model_type() const {
    return json_.contains("model_type") && json_["model_type"].is_string() ? json_["model_type"].get<std::string>() : "";
  }

  Status count(const char* key, int64_t fallback, int64_t max, double* out) const {
    if (!json_.contains(key) || json_[key].is_null()) {
      *out = static_cast<double>(fallback);
      return Status::ok();
    }
    const nlohmann::json& v = json_[key];
    // Compared unsigned, as parsed text holds a positive whole number; a negative one is refused.
    const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!whole || v.get<uint64_t>() < 1 || v.get<uint64_t>() > static_cast<uint64_t>(max)) {
      const std::string text = v.dump();
      return Status::invalid(path_ + ": key \"" + prefix_ + key + "\": value " +
                             (text.size() <= 60 ? text : text.substr(0, 60) + "...") +
                             " is not allowed (allowed: a whole number from 1 to " + std::to_string(max) + ")");
    }
    *out = static_cast<double>(v.get<uint64_t>());
    return Status::ok();
  }

  Status flag(const char* key, bool fallback, bool* out) const {
    *out = fallback;
    if (!json_.contains(key) || json_[key].is_null()) return Status::ok();
    if (!json_[key].is_boolean()) {
      return Status::invalid(path_ + ": key \"" + prefix_ + key + "\": value " + json_[key].dump().substr(0, 60) +
                             " is not allowed (allowed: true, false)");
    }
    *out = json_[key].get<bool>();
    return Status::ok();
  }

 private:
  std::string path_, prefix_;
  nlohmann::json json_;
};

// SigLIP's vision tower (transformers modeling_siglip.py SiglipVisionTransformer; the defaults are
// SiglipVisionConfig's): a biased conv patch embedding, a learned position per patch, layers of two
// LayerNorms, biased q, k, v, out and a biased fc1/fc2 MLP, a final LayerNorm, and, with
// vision_use_head, the attention-pooling head (a probe, a packed in-projection, out-projection,
// LayerNorm and MLP). `width` receives the tower's hidden size, which its projector maps from.
Status siglip_params(const Section& v, double* out, double* width) {
  double h = 0, i = 0, layers = 0, channels = 0, image = 0, patch = 0;
  SPPLAN_RETURN_IF_ERROR(v.count("hidden_size", 768, kMaxEncoderDim, &h));
  *width = h;
  SPPLAN_RETURN_IF_ERROR(v.count("intermediate_size", 3072, kMaxEncoderDim, &i));
  SPPLAN_RETURN_IF_ERROR(v.count("num_hidden_layers", 12, kMaxEncoderLayers, &layers));
  SPPLAN_RETURN_IF_ERROR(v.count("num_channels", 3, kMaxEncoderDim, &channels));
  SPPLAN_RETURN_IF_ERROR(v.count("image_size", 224, kMaxEncoderDim, &image));
  SPPLAN_RETURN_IF_ERROR(v.count("patch_size", 16, kMaxEncoderDim, &patch));
  bool head = true;
  SPPLAN_RETURN_IF_ERROR(v.flag("vision_use_head", true, &head));
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
Status pixtral_params(const Section& v, double* out, double* width) {
  double h = 0, i = 0, layers = 0, channels = 0, patch = 0;
  SPPLAN_RETURN_IF_ERROR(v.count("hidden_size", 1024, kMaxEncoderDim, &h));
  *width = h;
  SPPLAN_RETURN_IF_ERROR(v.count("intermediate_size", 4096, kMaxEncoderDim, &i));
  SPPLAN_RETURN_IF_ERROR(v.count("num_hidden_layers", 24, kMaxEncoderLayers, &layers));
  SPPLAN_RETURN_IF_ERROR(v.count("num_channels", 3, kMaxEncoderDim, &channels));
  SPPLAN_RETURN_IF_ERROR(v.count("patch_size", 16, kMaxEncoderDim, &patch));
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
Status mistral3_projector_params(const std::string& path, const nlohmann::json& config, double vision_h, double text_h,
                                 double* out) {
  const Section top(path, config, "");
  double merge = 0;
  SPPLAN_RETURN_IF_ERROR(top.count("spatial_merge_size", 2, kMaxEncoderDim, &merge));
  bool bias = false;
  SPPLAN_RETURN_IF_ERROR(top.flag("multimodal_projector_bias", false, &bias));
  const nlohmann::json layers = config.value("vision_feature_layer", nlohmann::json(-1));
  const double features = layers.is_array() && !layers.empty() ? static_cast<double>(layers.size()) : 1.0;
  *out = vision_h + vision_h * merge * merge * vision_h + vision_h * features * text_h + text_h * text_h +
         (bias ? 2 * text_h : 0.0);
  return Status::ok();
}

}  // namespace

Status read_multimodal_encoders(const std::string& path, const nlohmann::json& config, ModelSpec* m) {
  m->encoder_params = 0;
  m->encoders_left_out = false;
  if (!(config.contains("text_config") && config["text_config"].is_object())) return Status::ok();
  const std::string family =
      config.contains("model_type") && config["model_type"].is_string() ? config["model_type"].get<std::string>() : "";
  const Section vision(path, config.contains("vision_config") ? config["vision_config"] : nlohmann::json(), "vision_config.");
  const double text_h = static_cast<double>(m->hidden_size);
  double tower = 0, vision_h = 0, projector = 0;
  if (family == "gemma3" && vision.present() && vision.model_type() == "siglip_vision_model") {
    SPPLAN_RETURN_IF_ERROR(siglip_params(vision, &tower, &vision_h));
    projector = gemma3_projector_params(vision_h, text_h);
  } else if (family == "mistral3" && vision.present() && vision.model_type() == "pixtral") {
    SPPLAN_RETURN_IF_ERROR(pixtral_params(vision, &tower, &vision_h));
    SPPLAN_RETURN_IF_ERROR(mistral3_projector_params(path, config, vision_h, text_h, &projector));
  } else {
    m->encoders_left_out = true;  // a tower or projector whose modeling was not read, or none named
    return Status::ok();
  }
  m->encoder_params = tower + projector;
  // Another encoder beside the one counted (an audio tower) is named, not counted.
  m->encoders_left_out = config.contains("audio_config") && config["audio_config"].is_object();
  return Status::ok();
}

}  // namespace spplan
