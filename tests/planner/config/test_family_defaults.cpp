// planner/config/family_defaults.hpp: a key a config.json omits takes its family's transformers
// default (transformers 5.24.0's config classes; tests/scripts/family_defaults_test.py checks the
// whole table against AutoConfig), and a file that names no family spplan read is refused.
#include "planner/config/family_defaults.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "planner/config/loaders.hpp"
#include "planner/config/model_families.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

using testing_scratch::ScratchDir;

const std::string kData = SPPLAN_TEST_DATA_DIR;

// `text` written as DIR/config.json (or DIR/model.toml) and loaded.
Result<ModelSpec> load_text(const ScratchDir& dir, const std::string& file, const std::string& text) {
  const std::string path = dir.path() + "/" + file;
  std::ofstream(path) << text;
  return load_model(path);
}

// google/gemma-3-4b-it's config.json as the Hub holds it: its text_config lists only what differs
// from Gemma3TextConfig (no heads, kv heads, head_dim, vocab, layer types or pattern). Read with
// the class's defaults it is the model transformers writes out whole (gemma3_4b_multimodal.json):
// 8 heads of 256, 4 kv heads, and of 34 layers the 5 with (i + 1) % 6 == 0 full, 29 windowed.
TEST(FamilyDefaults, HubGemma3ConfigPlansAsTransformersBuildsIt) {
  ScratchDir dir("gemma3_hub");
  const auto hub = load_text(dir, "config.json", R"({
      "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                      "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                      "sliding_window": 1024},
      "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                        "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
                        "patch_size": 14, "vision_use_head": false}})");
  ASSERT_TRUE(hub.ok()) << hub.status().message();
  EXPECT_EQ(hub->num_attention_heads, 8);
  EXPECT_EQ(hub->num_key_value_heads, 4);
  EXPECT_EQ(hub->head_dim, 256);
  EXPECT_EQ(hub->vocab_size, 262208);
  EXPECT_EQ(hub->sliding_window, 1024);
  EXPECT_EQ(hub->full_attention_layers, 5);
  EXPECT_EQ(hub->windowed_layers(), 29);
  EXPECT_TRUE(hub->tie_word_embeddings && hub->qk_norm && hub->sandwich_norms);
  const auto whole = load_model(kData + "/gemma3_4b_multimodal.json");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ModelSpec same = *hub;
  same.name = whole->name;
  EXPECT_EQ(same, *whole);
}

// One family's default each: what transformers 5.24.0 builds where the key is absent.
TEST(FamilyDefaults, AnAbsentKeyTakesItsFamilysDefault) {
  ScratchDir dir("family_defaults");
  const std::string shapes = R"("num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100)";
  const struct {
    std::string type, extra;
    int64_t head_dim, window, full;
    bool tied;
  } cases[] = {
      {"qwen3", "", 128, 0, 0, false},  // Qwen3Config.head_dim, not hidden / heads
      {"qwen2", "", 16, 0, 0, false},   // no head_dim key: hidden / heads
      {"llama", "", 16, 0, 0, false},
      // A window without use_sliding_window (false by the Qwen classes' default) is none.
      {"qwen2", R"(, "sliding_window": 32)", 16, 0, 0, false},
      {"qwen3", R"(, "sliding_window": 32)", 128, 0, 0, false},
      {"qwen3_moe", R"(, "sliding_window": 32, "num_experts": 0)", 16, 0, 0, false},
      {"qwen3", R"(, "sliding_window": 32, "use_sliding_window": true, "max_window_layers": 1)", 128, 32, 1, false},
      {"mistral", "", 16, 4096, 0, false},  // MistralConfig.sliding_window, every layer
      {"mistral", R"(, "sliding_window": null)", 16, 0, 0, false},
      {"mixtral", R"(, "num_local_experts": 0)", 16, 0, 0, false},  // MixtralConfig's window is None
      {"gemma", "", 256, 0, 0, true},
      // Gemma 2 alternates (layer i full when i is odd); its soft-capping said null to be priced.
      {"gemma2", R"(, "attn_logit_softcapping": null, "final_logit_softcapping": null)", 256, 4096, 2, true},
      {"gemma2", R"(, "attn_logit_softcapping": null, "final_logit_softcapping": null, "sliding_window": null)", 256,
       0, 0, true},
      {"gemma3_text", "", 256, 4096, 0, true},  // 4 layers: none with (i + 1) % 6 == 0
      {"gemma3_text", R"(, "sliding_window_pattern": 2)", 256, 4096, 2, true},
      {"gpt_oss", R"(, "num_local_experts": 4, "num_experts_per_tok": 2)", 64, 128, 2, false},
  };
  for (const auto& c : cases) {
    const std::string text = R"({"model_type": ")" + c.type + "\", " + shapes + c.extra + "}";
    const auto m = load_text(dir, "config.json", text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status().message();
    EXPECT_EQ(m->head_dim, c.head_dim) << text;
    EXPECT_EQ(m->sliding_window, c.window) << text;
    EXPECT_EQ(m->full_attention_layers, c.full) << text;
    EXPECT_EQ(m->tie_word_embeddings, c.tied) << text;
  }
}

// With nothing but its model_type a config is its class's default model (GLM-4.5-Air's shapes for
// Glm4MoeConfig): the preset of the same model differs only where the Hub's config does (its
// rope_theta) and in what a TOML file leaves out (the context).
TEST(FamilyDefaults, AModelTypeAloneIsTheClassDefaultModel) {
  ScratchDir dir("family_alone");
  const auto glm = load_text(dir, "config.json", R"({"model_type": "glm4_moe", "head_dim": 128})");
  ASSERT_TRUE(glm.ok()) << glm.status().message();
  ModelSpec preset = *load_model("glm-4.5-air");
  preset.name = glm->name;
  preset.rope_theta = glm->rope_theta;
  preset.attention_bias = glm->attention_bias;  // Glm4MoeConfig's false; the Hub's Air says true
  EXPECT_EQ(preset, *glm);
  const auto llama = load_text(dir, "config.json", R"({"model_type": "llama"})");
  ASSERT_TRUE(llama.ok()) << llama.status().message();
  EXPECT_EQ(llama->num_hidden_layers, 32);
  EXPECT_EQ(llama->num_key_value_heads, 32);  // LlamaConfig's None: as many as the heads
  EXPECT_EQ(llama->intermediate_size, 11008);
  EXPECT_EQ(llama->max_position_embeddings, 2048);
}

// No side doors: a config.json without model_type is shapes written by hand only when every key it
// holds is one spplan prices (Llama 4's text config names none, and holds chunked attention); a
// model TOML file naming a family spplan has not read is refused as its config.json is.
TEST(FamilyDefaults, AFileNamingNoFamilySpplanReadIsRefused) {
  ScratchDir dir("family_refused");
  const std::string shapes = R"("num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100)";
  EXPECT_TRUE(load_text(dir, "config.json", "{" + shapes + R"(, "rope_theta": 500000.0})").ok());
  const auto unread = load_text(dir, "config.json", "{" + shapes + R"(, "attention_chunk_size": 8192})");
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.status().message(),
            dir.path() + "/config.json: key \"model_type\": missing (allowed: one of llama, mistral, ministral, "
                         "mixtral, qwen2, qwen3, qwen3_moe, glm4_moe, gpt_oss, gemma, gemma2, gemma3, gemma3_text; a "
                         "file without it is read only when every key it holds is one spplan prices)");
  const std::string toml = "num_hidden_layers = 2\nhidden_size = 64\nnum_attention_heads = 4\n"
                           "intermediate_size = 128\nvocab_size = 100\n";
  EXPECT_TRUE(load_text(dir, "model.toml", toml).ok());
  const auto named = load_text(dir, "model.toml", "model_type = \"llama4_text\"\n" + toml);
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().message(),
            dir.path() + "/model.toml: key \"model_type\": value \"llama4_text\" is a family whose layers spplan has "
                         "not read, and would price wrong (allowed: one of llama, mistral, ministral, mixtral, qwen2, "
                         "qwen3, qwen3_moe, glm4_moe, gpt_oss, gemma, gemma2, gemma3, gemma3_text; or no model_type, "
                         "for the shapes of a decoder of their layers)");
}

// The table itself: one record a priced family, each default where the reader reads it.
TEST(FamilyDefaults, EveryPricedFamilyHasOneRecord) {
  for (const std::string& type : priced_model_types()) {
    const ModelFamily* family = find_family(type);
    ASSERT_NE(family, nullptr) << type;
    EXPECT_EQ(family->model_type, type);
  }
  EXPECT_EQ(find_family("llama4_text"), nullptr);
  // A default under one spelling is not added beside the other (transformers 5 saves Qwen3-MoE's
  // num_experts as num_local_experts, and RoPE as rope_parameters).
  const nlohmann::json saved = {{"num_local_experts", 4}, {"rope_parameters", {{"rope_theta", 5.0}}}};
  const nlohmann::json filled = with_family_defaults(saved, *find_family("qwen3_moe"));
  EXPECT_FALSE(filled.contains("num_experts"));
  EXPECT_EQ(filled["hidden_size"], 2048);
  EXPECT_FALSE(with_family_defaults(saved, *find_family("gpt_oss")).contains("rope_scaling"));
  // A null is the default (ConfigKeys' rule), except where transformers' None means something.
  const nlohmann::json nulls = {{"tie_word_embeddings", nullptr}, {"sliding_window", nullptr}, {"head_dim", nullptr}};
  const nlohmann::json gemma3 = with_family_defaults(nulls, *find_family("gemma3_text"));
  EXPECT_EQ(gemma3["tie_word_embeddings"], true);
  EXPECT_TRUE(gemma3["sliding_window"].is_null());  // no window
  EXPECT_TRUE(gemma3["head_dim"].is_null());        // hidden / heads
}

}  // namespace
}  // namespace spplan
