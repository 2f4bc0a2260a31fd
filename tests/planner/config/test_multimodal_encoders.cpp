// planner/config/multimodal_encoders.hpp: the encoders beside a multimodal config's language model,
// counted as transformers builds them.
#include "planner/config/multimodal_encoders.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace spplan {
namespace {

// The language model's width the projectors map to (Gemma 3 4B's, Mistral Small 3.1's).
ModelSpec text_model(int64_t hidden_size) {
  ModelSpec m;
  m.hidden_size = hidden_size;
  return m;
}

const nlohmann::json kGemma3Vision = {{"model_type", "siglip_vision_model"}, {"hidden_size", 1152},
                                      {"intermediate_size", 4304}, {"num_hidden_layers", 27},
                                      {"num_attention_heads", 16}, {"patch_size", 14}, {"image_size", 896},
                                      {"vision_use_head", false}};

// The reference counts are transformers 5.24's, each model built on the meta device and its
// parameters summed by module (vision_tower, multi_modal_projector):
//   Gemma3ForConditionalGeneration(Gemma3Config(text_config=gemma3_4b_text, vision_config=V))
//   Mistral3ForConditionalGeneration(Mistral3Config(text_config={hidden_size 5120, ...},
//       vision_config={pixtral, 1024 wide, 4096, 24 layers, patch 14}))
TEST(MultimodalEncoders, CountsAsTransformersBuildsThem) {
  ModelSpec gemma = text_model(2560);
  nlohmann::json config = {{"model_type", "gemma3"}, {"text_config", nlohmann::json::object()}, {"vision_config", kGemma3Vision}};
  ASSERT_TRUE(read_multimodal_encoders(ConfigKeys("config.json", config), &gemma).is_ok());
  EXPECT_EQ(gemma.encoder_params, 416866032.0 + 2950272.0);  // SigLIP without its pooling head; projector
  EXPECT_FALSE(gemma.encoders_left_out);
  config["vision_config"]["vision_use_head"] = true;  // SiglipVisionConfig's default
  ASSERT_TRUE(read_multimodal_encoders(ConfigKeys("config.json", config), &gemma).is_ok());
  EXPECT_EQ(gemma.encoder_params, 432104384.0 + 2950272.0);

  ModelSpec mistral = text_model(5120);
  const nlohmann::json pixtral = {{"model_type", "mistral3"},
                                  {"text_config", nlohmann::json::object()},
                                  {"vision_config",
                                   {{"model_type", "pixtral"}, {"hidden_size", 1024}, {"intermediate_size", 4096},
                                    {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"patch_size", 14},
                                    {"image_size", 1540}}}};
  ASSERT_TRUE(read_multimodal_encoders(ConfigKeys("config.json", pixtral), &mistral).is_ok());
  EXPECT_EQ(mistral.encoder_params, 403305472.0 + 35652608.0);
  EXPECT_FALSE(mistral.encoders_left_out);
}

// A tower whose modeling was not read (LLaVA's CLIP) is named, not counted (a text config has none:
// test_loaders' MultimodalConfigPlansItsLanguageModelWithItsEncoder).
TEST(MultimodalEncoders, AnUnreadTowerIsNamedNotCounted) {
  ModelSpec llava = text_model(4096);
  const nlohmann::json config = {{"model_type", "llava"},
                                 {"text_config", {{"model_type", "llama"}}},
                                 {"vision_config", {{"model_type", "clip_vision_model"}}}};
  ASSERT_TRUE(read_multimodal_encoders(ConfigKeys("config.json", config), &llava).is_ok());
  EXPECT_EQ(llava.encoder_params, 0.0);
  EXPECT_TRUE(llava.encoders_left_out);
}

// A bad tower dimension is one line naming the file and the nested key.
TEST(MultimodalEncoders, BadDimensionsAreOneLineNamingTheNestedKey) {
  const struct {
    const char* key;
    nlohmann::json value;
    const char* expected;
  } cases[] = {
      {"hidden_size", 0, "m.json: key \"vision_config.hidden_size\": value 0 is not allowed (allowed: a whole number from 1 to 16777216)"},
      {"num_hidden_layers", -3, "m.json: key \"vision_config.num_hidden_layers\": value -3 is not allowed (allowed: a whole number from 1 to 10000)"},
      {"patch_size", "14", "m.json: key \"vision_config.patch_size\": value \"14\" is not allowed (allowed: a whole number from 1 to 16777216)"},
      {"vision_use_head", 1, "m.json: key \"vision_config.vision_use_head\": value 1 is not allowed (allowed: true, false)"},
  };
  for (const auto& c : cases) {
    nlohmann::json config = {{"model_type", "gemma3"}, {"text_config", nlohmann::json::object()}, {"vision_config", kGemma3Vision}};
    config["vision_config"][c.key] = c.value;
    ModelSpec m = text_model(2560);
    const Status s = read_multimodal_encoders(ConfigKeys("m.json", config), &m);
    ASSERT_FALSE(s.is_ok()) << c.key;
    EXPECT_EQ(s.message(), c.expected);
  }
  nlohmann::json merge = {{"model_type", "mistral3"}, {"spatial_merge_size", 0},
                          {"text_config", nlohmann::json::object()}, {"vision_config", {{"model_type", "pixtral"}}}};
  ModelSpec m = text_model(5120);
  EXPECT_EQ(read_multimodal_encoders(ConfigKeys("m.json", merge), &m).message(),
            "m.json: key \"spatial_merge_size\": value 0 is not allowed (allowed: a whole number from 1 to 16777216)");
}

}  // namespace
}  // namespace spplan
