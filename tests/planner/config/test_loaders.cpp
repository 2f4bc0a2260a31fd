#include "planner/config/loaders.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

const std::string kData = SPPLAN_TEST_DATA_DIR;

// `p` written as a plan file (plan --out) and read back (simulate, export and run read it so).
Result<PlanSpec> round_trip(const PlanSpec& p) {
  const std::string path = testing::TempDir() + "/plan_round_trip." + std::to_string(getpid()) + ".toml";
  SPPLAN_RETURN_IF_ERROR(write_file_atomically(path, plan_to_toml(p)));
  Result<PlanSpec> back = load_plan(path);
  std::remove(path.c_str());
  return back;
}

TEST(LoadModel, PresetsMatchPublishedConfigs) {
  const auto m = load_model("llama-3.1-8b");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->num_hidden_layers, 32);
  EXPECT_EQ(m->hidden_size, 4096);
  EXPECT_EQ(m->num_key_value_heads, 8);
  EXPECT_EQ(m->intermediate_size, 14336);
  EXPECT_EQ(m->vocab_size, 128256);
  EXPECT_FALSE(m->tie_word_embeddings);
  const auto q = load_model("qwen3-4b");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->qk_norm);
  EXPECT_TRUE(q->tie_word_embeddings);
}

TEST(LoadModel, EveryPresetLoads) {
  for (const auto& name : model_presets()) EXPECT_TRUE(load_model(name).ok()) << name;
  for (const auto& name : gpu_presets()) EXPECT_TRUE(load_gpu(name).ok()) << name;
  EXPECT_GE(model_presets().size(), 7u);
  EXPECT_GE(gpu_presets().size(), 5u);
}

TEST(LoadPlan, EveryBundledPlanLoads) {
  int plans = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs_dir() + "/plans")) {
    const auto plan = load_plan(entry.path().string());
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    ++plans;
  }
  EXPECT_GE(plans, 2);
}

TEST(LoadModel, ReadsHuggingFaceConfigJson) {
  const auto m = load_model(kData + "/config.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->hidden_size, 2560);
  EXPECT_TRUE(m->qk_norm);
  EXPECT_EQ(m->vocab_size, 151936);
}

// A config.json's family is one whose layers the costmodel prices; a config without model_type
// is shapes written by hand (transformers cannot load it), read as a model TOML file is.
TEST(LoadModel, FamiliesArePricedOnlyWhereTheirLayersWereRead) {
  const std::string dir = ::testing::TempDir() + "/families";
  std::filesystem::create_directories(dir);
  const std::string shapes = R"("num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100)";
  const struct {
    std::string type;  // the model_type key's text, "" for none
    bool loads;
  } cases[] = {{"", true}, {R"("model_type": "ministral", )", true}, {R"("model_type": null, )", true},
               {R"("model_type": "jamba", )", false}, {R"("model_type": "phi3", )", false},
               {R"("model_type": 7, )", false}};
  for (const auto& c : cases) {
    const std::string file = dir + "/config.json";
    std::ofstream(file) << "{" << c.type << shapes << "}";
    const auto m = load_model(file);
    EXPECT_EQ(m.ok(), c.loads) << c.type << (m.ok() ? "" : m.status().message());
    if (!c.loads && !m.ok()) {
      EXPECT_NE(m.status().message().find("config.json: key \"model_type\": value "), std::string::npos);
      EXPECT_NE(m.status().message().find(" is a family whose layers spplan has not read, and would price wrong "
                                          "(allowed: llama, mistral, "),
                std::string::npos)
          << m.status().message();
    }
  }
}

// A multimodal config plans its language model (text_config) as the text model's config does, with
// the vision encoder beside it counted (multimodal_encoders.hpp); a text model's config has none.
TEST(LoadModel, MultimodalConfigPlansItsLanguageModelWithItsEncoder) {
  const auto multimodal = load_model(kData + "/gemma3_4b_multimodal.json");
  ASSERT_TRUE(multimodal.ok()) << multimodal.status().message();
  const auto text = load_model(kData + "/gemma3_4b_text.json");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(multimodal->encoder_params, 416866032.0 + 2950272.0);  // SigLIP and the projector (transformers' count)
  EXPECT_FALSE(multimodal->encoders_left_out);
  EXPECT_EQ(text->encoder_params, 0.0);  // a text config has no encoders, counted or named
  EXPECT_FALSE(text->encoders_left_out);
  // AutoModelForCausalLM builds Gemma 3's multimodal config, not Mistral 3's (transformers 5.24).
  EXPECT_TRUE(multimodal->causal_lm_class && text->causal_lm_class);
  EXPECT_FALSE(load_model(kData + "/mistral3_small_multimodal.json")->causal_lm_class);
  ModelSpec same = *multimodal;
  same.encoder_params = 0;
  same.name = text->name;
  EXPECT_EQ(same, *text);
}

// A bad key of a multimodal config's language model is named where it is, under text_config.
TEST(LoadModel, MultimodalConfigNamesItsLanguageModelsKeysUnderTextConfig) {
  std::ifstream in(kData + "/gemma3_4b_multimodal.json");
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string dir = ::testing::TempDir() + "/multimodal_keys." + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const struct {
    std::string from, to, expected;
  } cases[] = {
      {"\"hidden_size\": 2560", "\"hidden_size\": -1",
       "config.json: key \"text_config.hidden_size\": value -1 is not allowed (allowed: a whole number from 1 to "},
      {"\"factor\": 8.0", "\"factor\": 0.5",
       "config.json: key \"text_config.rope_scaling.factor\": value 0.5 is not allowed (allowed: a number from 1 to "},
  };
  for (const auto& c : cases) {
    const size_t at = good.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    std::string bad = good;
    std::ofstream(dir + "/config.json") << bad.replace(at, c.from.size(), c.to);
    const auto m = load_model(dir + "/config.json");
    ASSERT_FALSE(m.ok()) << c.to;
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
  std::filesystem::remove_all(dir);
}

// save_pretrained in transformers 5 nests rope_theta in "rope_parameters"; the default 10000 would
// give the engine another RoPE than the model was trained with.
TEST(LoadModel, ReadsRopeThetaFromTransformers5RopeParameters) {
  const auto m = load_model(kData + "/transformers5/config.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->rope_theta, 1e6);
  EXPECT_EQ(m->rms_norm_eps, 1e-6);
}

// The table of bad files and the exact one-line message each must give.
TEST(LoadModel, BadFilesGiveOneLineNamingFileKeyValueAndAllowed) {
  const struct {
    std::string file, expected;
  } cases[] = {
      {"bad_heads.toml", "bad_heads.toml: key \"num_key_value_heads\": value 4 does not divide num_attention_heads 6 (allowed: a divisor of num_attention_heads)"},
      {"unknown_key.toml", "unknown_key.toml: key \"hiden_size\": unknown key (allowed: name, model_type, num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size, tie_word_embeddings, qk_norm, sandwich_norms, rope_theta, rms_norm_eps, attention_bias, sliding_window, full_attention_layers, max_position_embeddings, num_experts, num_experts_per_tok, moe_intermediate_size, output_router_logits, norm_topk_prob, router_aux_loss_coef, attention_sinks, swiglu_limit, expert_biases, router_softmax_after_topk, n_shared_experts, first_k_dense_replace, router_sigmoid, partial_rotary_factor, n_group, topk_group, routed_scaling_factor, encoder_params, encoders_left_out, causal_lm_class, rope_scaling; closest: \"hidden_size\")"},
      {"misspelt_required.toml", "misspelt_required.toml: key \"num_hiden_layers\": unknown key (closest allowed: \"num_hidden_layers\", which is required and missing)"},
      {"negative_layers.toml", "negative_layers.toml: key \"num_hidden_layers\": value -3 is not allowed (allowed: a whole number from 1 to 10000)"},
      {"missing_vocab.toml", "missing_vocab.toml: key \"vocab_size\": missing (required)"},
      {"syntax_error.toml", "syntax_error.toml:1:21: "},
      // toml++ quotes the character it stopped at, here a newline: shown as \x0a (found by fuzzing).
      {"newline_in_syntax_error.toml", "newline_in_syntax_error.toml:1:22: Error while parsing floating-point: expected 'nan', saw 'n\\x0a'"},
      {"nope.toml", "nope.toml: cannot open (no such file)"},
      {"no_head_dim.toml", "no_head_dim.toml: key \"head_dim\": missing, and hidden_size 16 / num_attention_heads 32 is below 1 (allowed: a head_dim of at least 1)"},
      {"deep_key.toml", "deep_key.toml:2: more than 256 dots outside strings (allowed: keys nested at most 256 levels deep)"},
      {"multiline_value.toml", "multiline_value.toml: key \"num_hidden_layers\": value \"3\\x0a6\" is not allowed (allowed: a whole number from 1 to 10000)"},
      {"too_many_layers.json", "too_many_layers.json: key \"num_hidden_layers\": value 1099511627776 is not allowed (allowed: a whole number from 1 to 10000)"},
      {"tie_string.json", "tie_string.json: key \"tie_word_embeddings\": value \"true\" is not allowed (allowed: true, false)"},
      {"truncated.json", "truncated.json: not valid JSON at byte 19 (allowed: a JSON object, as in a config.json)"},
      {"number_overflow.json", "number_overflow.json: not valid JSON: number overflow parsing '1e400' (allowed: a JSON object, as in a config.json)"},
      {"duplicate_key.json", "duplicate_key.json: key \"hidden_size\": given twice in one object (allowed: each key once)"},
      {"array.json", "array.json: the top level is array (allowed: a JSON object, as in a config.json)"},
      {"no_head_dim.json", "no_head_dim.json: key \"head_dim\": missing, and hidden_size 16 / num_attention_heads 32 is below 1 (allowed: a head_dim of at least 1)"},
  };
  for (const auto& c : cases) {
    const auto m = load_model(kData + "/" + c.file);
    ASSERT_FALSE(m.ok()) << c.file;
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
}

// Models the costmodel cannot price are refused naming the key, never priced as a dense SwiGLU
// decoder (a Mixtral once read as a dense 7B had about 6.6x too few parameters).
TEST(LoadModel, ArchitecturesSpplanCannotPriceAreRefusedNamingTheKey) {
  const struct {
    std::string file, expected;
  } cases[] = {
      {"deepseek_v3.json", "deepseek_v3.json: key \"n_routed_experts\": value 256 is a mixture of experts spplan cannot price yet (allowed: absent, null, 0 or 1; experts as Mixtral's num_local_experts, Qwen3-MoE's num_experts or GLM-4.5's n_routed_experts with model_type \"glm4_moe\")"},
      {"gemma2.json", "gemma2.json: key \"attn_logit_softcapping\": value 50.0 is logit soft-capping, which spplan cannot price (allowed: absent or null)"},
      {"gelu_mlp.json", "gelu_mlp.json: key \"hidden_act\": value \"gelu\" is an MLP spplan cannot price (allowed: \"silu\", or a gelu in a Gemma config)"},
      // Llama 4 Scout's text model: keys the checks above pass (num_local_experts as Mixtral's), yet
      // a shared expert beside each routed one and chunked attention that no key names.
      {"llama4_scout.json", "llama4_scout.json: key \"text_config.model_type\": value \"llama4_text\" is a family whose layers spplan has not read, and would price wrong (allowed: llama, mistral, ministral, mixtral, qwen2, qwen3, qwen3_moe, glm4_moe, gpt_oss, gemma, gemma2, gemma3, gemma3_text; or a model TOML file with the shapes of a decoder of their layers)"},
  };
  for (const auto& c : cases) {
    const auto m = load_model(kData + "/" + c.file);
    ASSERT_FALSE(m.ok()) << c.file;
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidInput);
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
  // Qwen2 configs carry a window that use_sliding_window switches off: a dense model.
  EXPECT_TRUE(load_model(kData + "/qwen2_window_off.json").ok());
  // A window is full attention up to its length: the model loads, and check_plan refuses a longer
  // sequence (test_rope_scaling.cpp).
  // Qwen2 windows the layers from max_window_layers on: none past the last, all from 0, mixed refused.
  const std::string qwen2 = R"({"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100, "use_sliding_window": true,
      "sliding_window": 4096, "max_window_layers": )";
  const std::string dir = ::testing::TempDir() + "/qwen2_window";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << qwen2 << "28}";
  EXPECT_EQ(load_model(dir + "/config.json")->sliding_window, 0);
  std::ofstream(dir + "/config.json") << qwen2 << "0}";
  EXPECT_EQ(load_model(dir + "/config.json")->sliding_window, 4096);
  std::ofstream(dir + "/config.json") << qwen2 << "21}";  // the first 21 layers full, the other 7 windowed
  EXPECT_EQ(load_model(dir + "/config.json")->full_attention_layers, 21);
  EXPECT_EQ(load_model(dir + "/config.json")->windowed_layers(), 7);
  std::filesystem::remove_all(dir);
  const auto mistral = load_model(kData + "/mistral_v01.json");
  ASSERT_TRUE(mistral.ok()) << mistral.status().message();
  EXPECT_EQ(mistral->sliding_window, 4096);
}

// Windowed and full-attention layers in one model: transformers' layer_types (Gemma 3's
// five windowed layers to one full), Gemma 3's older sliding_window_pattern; its four norms a layer
// and q/k norms; gpt-oss's alternating layers, sinks and biased experts. Layer types that
// contradict the model are one line.
TEST(LoadModel, LayerTypesMixWindowedAndFullLayers) {
  const auto gemma3 = load_model(kData + "/gemma3_4b_text.json");
  ASSERT_TRUE(gemma3.ok()) << gemma3.status().message();
  EXPECT_EQ(gemma3->sliding_window, 1024);
  EXPECT_EQ(gemma3->full_attention_layers, 5);
  EXPECT_EQ(gemma3->windowed_layers(), 29);
  EXPECT_TRUE(gemma3->sandwich_norms);
  EXPECT_TRUE(gemma3->qk_norm);
  // gpt-oss: every other layer windowed at 128 (the first), a sink per head, 32 experts
  // as wide as intermediate_size with biases, 4 a token, the SwiGLU clamped at swiglu_limit; the
  // preset is the same model.
  const auto oss = load_model(kData + "/gpt_oss_20b.json");
  ASSERT_TRUE(oss.ok()) << oss.status().message();
  EXPECT_EQ(oss->sliding_window, 128);
  EXPECT_EQ(oss->full_attention_layers, 12);
  EXPECT_TRUE(oss->attention_sinks && oss->expert_biases && oss->router_softmax_after_topk && oss->attention_bias);
  EXPECT_DOUBLE_EQ(oss->swiglu_limit, 7.0);
  EXPECT_EQ(oss->num_experts, 32);
  EXPECT_EQ(oss->experts_per_token, 4);
  EXPECT_EQ(oss->moe_intermediate_size, 2880);
  EXPECT_DOUBLE_EQ(oss->router_aux_loss_coef, 0.9);
  EXPECT_EQ(oss->rope_scaling.type, RopeType::kYarn);
  ModelSpec preset = *load_model("gpt-oss-20b");
  preset.name = oss->name;
  EXPECT_EQ(preset, *oss);
  const std::string dir = ::testing::TempDir() + "/layer_types." + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string head = R"({"model_type": "gemma3_text", "num_hidden_layers": 3, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100)";
  const struct {
    std::string tail;
    int64_t window, full;  // -1: refused with `expected`
    std::string expected;
  } cases[] = {
      {R"(, "sliding_window": 8, "sliding_window_pattern": 3})", 8, 1, ""},
      {R"(, "sliding_window": 8, "sliding_window_pattern": 1})", 0, 0, ""},  // every layer full (Gemma3TextConfig)
      {R"(, "swiglu_limit": 7.0})", -1, -1,  // gpt-oss's clamp under another model_type: named by its own key
       "key \"swiglu_limit\": value 7.0 is gpt-oss's clamped SwiGLU under another model_type (allowed: absent, or "
       "model_type \"gpt_oss\")"},
      {R"(, "sliding_window": null, "sliding_window_pattern": 2})", -1, -1,
       "key \"sliding_window_pattern\": value 2 is not allowed (allowed: absent, or a sliding_window for the layers it windows)"},
      {R"(, "sliding_window": 8, "layer_types": ["full_attention", "full_attention", "full_attention"]})", 0, 0, ""},
      {R"(, "sliding_window": 8, "layer_types": ["sliding_attention", "full_attention"]})", -1, -1,
       "key \"layer_types\": value [\"sliding_attention\",\"full_attention\"] is not allowed (allowed: a list of "
       "num_hidden_layers (3) \"sliding_attention\" or \"full_attention\")"},
      {R"(, "sliding_window": null, "layer_types": ["sliding_attention", "full_attention", "full_attention"]})", -1, -1,
       "(allowed: \"full_attention\" only, or a sliding_window for its \"sliding_attention\" layers)"},
      {R"(, "sliding_window": 8, "layer_types": ["chunked_attention", "full_attention", "full_attention"]})", -1, -1,
       "key \"layer_types\": value \"chunked_attention\" is an attention spplan cannot price (allowed: "
       "\"full_attention\", \"sliding_attention\")"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/config.json") << head << c.tail;
    const auto m = load_model(dir + "/config.json");
    if (c.window < 0) {
      ASSERT_FALSE(m.ok()) << c.tail;
      EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
      EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
      continue;
    }
    ASSERT_TRUE(m.ok()) << c.tail << ": " << m.status().message();
    EXPECT_EQ(m->sliding_window, c.window) << c.tail;
    EXPECT_EQ(m->full_attention_layers, c.full) << c.tail;
  }
  std::filesystem::remove_all(dir);
}

// GLM-4.5's mixture: n_routed_experts with a shared expert, dense first layers, a
// sigmoid router and RoPE on half of each head, read from its config.json (the preset is the same
// model); what contradicts the model is one line.
TEST(LoadModel, GlmMixtureIsReadWithItsSharedExpertAndDenseFirstLayers) {
  const auto air = load_model(kData + "/glm4_moe_air.json");
  ASSERT_TRUE(air.ok()) << air.status().message();
  EXPECT_EQ(air->num_experts, 128);
  EXPECT_EQ(air->experts_per_token, 8);
  EXPECT_EQ(air->moe_intermediate_size, 1408);
  EXPECT_EQ(air->shared_expert_intermediate_size, 1408);
  EXPECT_EQ(air->first_dense_layers, 1);
  EXPECT_EQ(air->mixture_layers(), 45);
  EXPECT_EQ(air->routed_width(), 9 * 1408);
  EXPECT_TRUE(air->router_sigmoid && air->glm_mixture() && air->attention_bias && air->norm_topk_prob);
  EXPECT_FALSE(air->qk_norm || air->output_router_logits);
  EXPECT_DOUBLE_EQ(air->partial_rotary_factor, 0.5);
  ModelSpec preset = *load_model("glm-4.5-air");
  preset.name = air->name;
  EXPECT_EQ(preset, *air);
  const std::string dir = ::testing::TempDir() + "/glm_moe." + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string head = R"({"model_type": "glm4_moe", "num_hidden_layers": 3, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100, "moe_intermediate_size": 16)";
  const struct {
    std::string tail;
    std::string expected;  // empty: read
  } cases[] = {
      {R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 0, "first_k_dense_replace": 0, "use_qk_norm": true})", ""},
      {R"(, "n_routed_experts": 1})", "key \"n_routed_experts\": value 1 is not allowed (allowed: 2 or more)"},
      {R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 3})",
       "key \"first_k_dense_replace\": value 3 leaves no mixture layer of 3 (allowed: 0 to num_hidden_layers - 1)"},
      {R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "partial_rotary_factor": 1.5})",
       "key \"partial_rotary_factor\": value 1.5 is not allowed (allowed: a number above 0, at most 1)"},
      {R"(, "n_routed_experts": 4, "num_experts_per_tok": 5})",
       "key \"num_experts_per_tok\": value 5 with 4 experts (allowed: 1 to 4)"},
      {R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": -1})",
       "key \"n_shared_experts\": value -1 is not allowed (allowed: a whole number from 0 to 1048576)"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir + "/config.json") << head << c.tail;
    const auto m = load_model(dir + "/config.json");
    if (!c.expected.empty()) {
      ASSERT_FALSE(m.ok()) << c.tail;
      EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
      EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
      continue;
    }
    ASSERT_TRUE(m.ok()) << c.tail << ": " << m.status().message();
    EXPECT_EQ(m->shared_expert_intermediate_size, 0);
    EXPECT_EQ(m->first_dense_layers, 0);
    EXPECT_TRUE(m->qk_norm && m->router_sigmoid);
  }
  // transformers 5 saves the rotated share inside rope_parameters: read there too.
  std::ofstream(dir + "/config.json") << head << R"(, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}})";
  const auto v5 = load_model(dir + "/config.json");
  ASSERT_TRUE(v5.ok()) << v5.status().message();
  EXPECT_DOUBLE_EQ(v5->partial_rotary_factor, 0.25);
  // A TOML file of model_type glm4_moe or gpt_oss without experts would put a router's or the
  // experts' parts on a dense MLP.
  for (const auto& [type, key] : {std::pair{"glm4_moe", "first_k_dense_replace"}, std::pair{"gpt_oss", "expert_biases"}}) {
    std::ofstream(dir + "/dense.toml") << "model_type = \"" << type << "\"\nnum_hidden_layers = 2\nhidden_size = 64\n"
                                          "num_attention_heads = 4\nintermediate_size = 128\nvocab_size = 100\n";
    const auto dense = load_model(dir + "/dense.toml");
    ASSERT_FALSE(dense.ok()) << type;
    EXPECT_NE(dense.status().message().find("key \"" + std::string(key) + "\": a mixture's, given without experts"),
              std::string::npos)
        << dense.status().message();
  }
  std::filesystem::remove_all(dir);
}

// Mixtures of experts every layer of which routes over one set of SwiGLU experts are read:
// Mixtral's num_local_experts (experts intermediate_size wide), Qwen3-MoE's num_experts with
// moe_intermediate_size; what the costmodel does not price, and keys that contradict, are one line.
TEST(LoadModel, MixturesOfExpertsAreReadAndTheirBadKeysRefused) {
  const auto mixtral = load_model(kData + "/mixtral.json");
  ASSERT_TRUE(mixtral.ok()) << mixtral.status().message();
  EXPECT_EQ(mixtral->num_experts, 8);
  EXPECT_EQ(mixtral->experts_per_token, 2);
  EXPECT_EQ(mixtral->moe_intermediate_size, 14336);
  EXPECT_EQ(mixtral->routed_width(), 2 * 14336);
  EXPECT_TRUE(mixtral->norm_topk_prob);  // MixtralTopKRouter always divides by the top-k's sum
  EXPECT_DOUBLE_EQ(mixtral->router_aux_loss_coef, 0.02);
  const auto qwen = load_model(kData + "/qwen3_moe.json");
  ASSERT_TRUE(qwen.ok()) << qwen.status().message();
  EXPECT_EQ(qwen->num_experts, 128);
  EXPECT_EQ(qwen->experts_per_token, 8);
  EXPECT_EQ(qwen->moe_intermediate_size, 768);
  EXPECT_TRUE(qwen->qk_norm);
  EXPECT_TRUE(qwen->norm_topk_prob);
  EXPECT_DOUBLE_EQ(qwen->router_aux_loss_coef, 0.001);
  const std::string base = R"("num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100, "model_type": "qwen3_moe", )";
  {  // transformers 5 saves Qwen3-MoE's expert count as num_local_experts: still Qwen3-MoE's experts
    const std::string dir = ::testing::TempDir() + "/moe_v5";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/config.json") << "{" << base
                                        << R"("num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32})";
    const auto v5 = load_model(dir + "/config.json");
    ASSERT_TRUE(v5.ok()) << v5.status().message();
    EXPECT_EQ(v5->num_experts, 4);
    EXPECT_EQ(v5->moe_intermediate_size, 32);
    EXPECT_FALSE(v5->norm_topk_prob);  // Qwen3MoeConfig's default
    std::filesystem::remove_all(dir);
  }
  const struct {
    std::string keys, expected;
  } cases[] = {
      {R"("num_experts": 8, "num_experts_per_tok": 9, "moe_intermediate_size": 32)",
       "config.json: key \"num_experts_per_tok\": value 9 with 8 experts (allowed: 1 to 8)"},
      // Absent, num_experts_per_tok is Qwen3MoeConfig's 8.
      {R"("num_experts": 4, "moe_intermediate_size": 32)",
       "config.json: key \"num_experts_per_tok\": value 8 with 4 experts (allowed: 1 to 4)"},
      {R"("num_experts": 8, "num_local_experts": 8, "num_experts_per_tok": 2)",
       "config.json: key \"num_experts\": given beside num_local_experts (allowed: one of them)"},
      {R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 2)",
       "config.json: key \"decoder_sparse_step\": value 2 is not allowed (allowed: 1: every layer a mixture; dense "
       "layers between them are not priced yet)"},
      {R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "mlp_only_layers": [0])",
       "config.json: key \"mlp_only_layers\": value [0] is not allowed"},
      {R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "output_router_logits": "yes")",
       "config.json: key \"output_router_logits\": value \"yes\" is not allowed (allowed: true, false)"},
      {R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "router_aux_loss_coef": -1)",
       "config.json: key \"router_aux_loss_coef\": value -1 is not allowed (allowed: a number from 0 to"},
      {R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "norm_topk_prob": 1)",
       "config.json: key \"norm_topk_prob\": value 1 is not allowed (allowed: true, false)"},
      {R"("num_local_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "router_jitter_noise": 0.01)",
       "config.json: key \"router_jitter_noise\": value 0.01 is not allowed"},
      {R"("num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64)",
       "config.json: key \"shared_expert_intermediate_size\": value 64 is a shared expert, which spplan cannot price yet "
       "(allowed: absent, null or 0)"},
  };
  const std::string dir = ::testing::TempDir() + "/moe";
  std::filesystem::create_directories(dir);
  for (const auto& c : cases) {
    std::ofstream(dir + "/config.json") << "{" << base << c.keys << "}";
    const auto m = load_model(dir + "/config.json");
    ASSERT_FALSE(m.ok()) << c.keys;
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
  std::filesystem::remove_all(dir);
}

// A key the file omits takes the default of the family's transformers config class: GemmaConfig
// ties the embeddings (an untied read adds V x h = 0.79B parameters to Gemma-7B).
TEST(LoadModel, OmittedTieWordEmbeddingsTakesTheFamilyDefault) {
  const auto gemma = load_model(kData + "/gemma.json");
  ASSERT_TRUE(gemma.ok()) << gemma.status().message();
  EXPECT_TRUE(gemma->tie_word_embeddings);
  const auto qwen2 = load_model(kData + "/qwen2_window_off.json");
  ASSERT_TRUE(qwen2.ok());
  EXPECT_FALSE(qwen2->tie_word_embeddings);
}

// A device where a file belongs: refused before reading (a device never ends). A folder is a
// Hugging Face model folder (test_model_folder.cpp).
TEST(LoadModel, NonRegularFilesAreRefused) {
  const struct {
    std::string path, expected;
  } cases[] = {
      {"/dev/zero", "/dev/zero: cannot open (not a regular file; allowed: a file)"},
  };
  for (const auto& c : cases) {
    const auto m = load_model(c.path);
    ASSERT_FALSE(m.ok()) << c.path;
    EXPECT_EQ(m.status().message(), c.expected);
  }
}

TEST(LoadModel, UnknownPresetListsPresets) {
  const auto m = load_model("gpt-9");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--model: value \"gpt-9\" is not a preset or a file (allowed presets: glm-4.5-air, gpt-oss-120b, gpt-oss-20b, llama-3.1-70b"),
            std::string::npos)
      << m.status().message();
}

TEST(LoadGpu, BadFilesNameKeyValueAndAllowedRange) {
  const struct {
    std::string file, expected;
  } cases[] = {
      {"bad_gpu.toml", "bad_gpu.toml: key \"memory_gib\": value -3 is not allowed (allowed: a number from 1e-15 to 1e+15)"},
      // 1e308 GiB is infinite in bytes: the estimate's JSON would print null.
      {"huge_memory.toml", "huge_memory.toml: key \"memory_gib\": value 1e+308 is not allowed (allowed: a number from 1e-15 to 1e+15)"},
      // A near-zero rate made the step time infinite (null in the JSON).
      {"tiny_tflops.toml", "tiny_tflops.toml: key \"bf16_tflops\": value 1e-300 is not allowed (allowed: a number from 1e-15 to 1e+15)"},
      {"negative_price.toml", "negative_price.toml: key \"price_per_gpu_hour\": value -0.5 is not allowed (allowed: a number from 0 to 1e+15)"},
      {"negative_launch.toml", "negative_launch.toml: key \"kernel_launch_s\": value -5e-06 is not allowed (allowed: a number from 0 to 1e+15)"},
      {"bwd_efficiency_above_one.toml", "bwd_efficiency_above_one.toml: key \"fp32_matmul_bwd_efficiency\": value 1.5 is not allowed (allowed: a fraction of peak in (0, 1])"},
  };
  for (const auto& c : cases) {
    const auto g = load_gpu(kData + "/" + c.file);
    ASSERT_FALSE(g.ok()) << c.file;
    EXPECT_NE(g.status().message().find(c.expected), std::string::npos) << g.status().message();
  }
}

TEST(Plan, RoundTripsThroughToml) {
  PlanSpec p;
  p.model = *load_model("qwen3-4b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = 4;
  p.seq_len = 131072;
  p.knobs.sp = 4;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.knobs.tiled_loss = true;  // Liger's fused linear cross-entropy
  p.stack = trainer_stack("liger");  // the stack travels with the plan
  p.cluster.gpu.matmul_bwd_efficiency = 0.125;  // a calibrated CPU's keys travel too (per dtype)
  p.cluster.gpu.fp32_matmul_bwd_efficiency = 0.875;
  p.cluster.gpu.fp32_elementwise_efficiency = 0.5;
  p.optimizer.lr = 3e-4;
  p.optimizer.warmup_steps = 20;
  p.optimizer.lr_schedule = LrSchedule::kCosine;
  p.optimizer.min_lr = 3e-5;
  p.optimizer.weight_decay = 0.01;
  p.optimizer.grad_clip = 1.0;
  p.optimizer.adam_beta2 = 0.999;
  p.optimizer.adam_eps = 1e-6;
  const auto back = round_trip(p);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(plan_to_toml(*back), plan_to_toml(p));
  EXPECT_EQ(back->optimizer.lr, 3e-4);
  EXPECT_EQ(back->optimizer.warmup_steps, 20);
  EXPECT_EQ(back->optimizer.lr_schedule, LrSchedule::kCosine);
  EXPECT_EQ(back->optimizer.min_lr, 3e-5);
  EXPECT_EQ(back->optimizer.weight_decay, 0.01);
  EXPECT_EQ(back->optimizer.grad_clip, 1.0);
  EXPECT_EQ(back->optimizer.adam_beta1, 0.9);
  EXPECT_EQ(back->optimizer.adam_beta2, 0.999);
  EXPECT_EQ(back->optimizer.adam_eps, 1e-6);
  EXPECT_EQ(back->stack.trainer, "liger");
  EXPECT_FALSE(back->stack.loop_holds_logits);
  EXPECT_EQ(back->cluster.gpu.matmul_bwd_efficiency, 0.125);
  EXPECT_EQ(back->cluster.gpu.fp32_matmul_bwd_efficiency, 0.875);
  EXPECT_EQ(back->cluster.gpu.fp32_elementwise_efficiency, 0.5);
}

// A plan file keeps everything the costmodel prices: a mixture's experts (written since mixtures'
// plans read back as dense models without them), its load-balancing logits, a model's windowed and
// full layers and Gemma's norms.
TEST(Plan, ModelArchitectureRoundTrips) {
  PlanSpec p;
  p.model = *load_model("qwen3-30b-a3b");
  p.model.output_router_logits = true;
  p.model.norm_topk_prob = false;
  p.model.router_aux_loss_coef = 0.02;
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = 8;
  p.seq_len = 65536;
  p.knobs.sp = 4;
  p.stack = trainer_stack("hf");
  settle_layout_attention(&p);
  const auto expect_model_round_trips = [](const PlanSpec& plan) {
    const auto back = round_trip(plan);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->model, plan.model) << plan.model.name;
  };
  expect_model_round_trips(p);
  p.model = *load_model(kData + "/gemma3_4b_text.json");
  expect_model_round_trips(p);
  p.model = *load_model(kData + "/gemma3_4b_multimodal.json");  // its language model and vision encoder
  ASSERT_GT(p.model.encoder_params, 0.0);
  expect_model_round_trips(p);
  p.model.encoders_left_out = true;  // an encoder not counted beside it
  expect_model_round_trips(p);
  p.model = *load_model(kData + "/mistral3_small_multimodal.json");  // only AutoModelForImageTextToText builds it
  ASSERT_FALSE(p.model.causal_lm_class);
  expect_model_round_trips(p);
  // Frozen or trained as the plan says, whatever the trainer's default (hf trains them).
  for (const bool frozen : {true, false}) {
    p.stack.freezes_encoders = frozen;
    const auto back = round_trip(p);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->stack.freezes_encoders, frozen);
    EXPECT_NE(plan_to_toml(p).find(frozen ? "\nfreeze_encoders = true\n" : "\nfreeze_encoders = false\n"),
              std::string::npos);
  }
  p.model = *load_model(kData + "/glm4_moe_air.json");  // shared expert, dense first layer, sigmoid router, partial RoPE
  expect_model_round_trips(p);
  p.model = *load_model(kData + "/gpt_oss_20b.json");  // sinks, clamp, biases, router after the top k
  p.knobs.sp = 1;  // its sinks run flex without a sequence split
  settle_layout_attention(&p);
  expect_model_round_trips(p);
}

// `--trainer engine` prices the plan as spplan run runs it; the attention kernel can be overridden,
// and both travel with the plan.
TEST(Plan, EngineTrainerAndAttentionRoundTrip) {
  PlanSpec p;
  p.model = *load_model("qwen3-0.6b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.seq_len = 32768;
  p.stack = trainer_stack("engine");
  EXPECT_EQ(p.stack.attention, AttentionKernel::kSdpa);
  EXPECT_FALSE(p.stack.zero3_prefetches);
  EXPECT_EQ(p.stack.offloaded_checkpoints_on_device, 1);
  EXPECT_FALSE(p.stack.loop_holds_logits);
  p.stack.attention = AttentionKernel::kFlash2;
  const auto back = round_trip(p);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->stack.trainer, "engine");
  EXPECT_EQ(back->stack.attention, AttentionKernel::kFlash2);
  EXPECT_FALSE(back->stack.zero3_prefetches);
  EXPECT_EQ(plan_to_toml(*back), plan_to_toml(p));
}

// A GPU that is a preset with one change (an H100 with 96 GB) names the preset and writes only the change.
TEST(LoadGpu, AFileExtendsAPresetWithBase) {
  const std::string path = testing::TempDir() + "/h100-96.toml";
  std::ofstream(path) << "base = \"h100-80gb\"\nmemory_gib = 96\nprice_per_gpu_hour = 2.1\n";
  const auto gpu = load_gpu(path);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  const GpuSpec h100 = *load_gpu("h100-80gb");
  EXPECT_EQ(gpu->memory_gib, 96);
  EXPECT_EQ(gpu->price_per_gpu_hour, 2.1);
  EXPECT_EQ(gpu->bf16_tflops, h100.bf16_tflops);  // the rest is the preset's
  EXPECT_EQ(gpu->sdpa_attention_efficiency, h100.sdpa_attention_efficiency);
  EXPECT_EQ(gpu->attention_fixed_s, h100.attention_fixed_s);
  EXPECT_EQ(gpu->name, "h100-96");
  EXPECT_EQ(gpu->measured_as(), "h100-80gb");  // held against the H100's measured error
  EXPECT_EQ(h100.measured_as(), "h100-80gb");
  PlanSpec plan;  // a saved plan keeps what the GPU extends, and every value
  plan.model = *load_model("qwen3-4b");
  plan.cluster = {*gpu, 4};
  plan.seq_len = 4096;
  plan.stack = *load_trainer("arctic");
  const auto loaded = round_trip(plan);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->cluster.gpu.measured_as(), "h100-80gb");
  EXPECT_EQ(loaded->cluster.gpu.memory_gib, 96);
  std::ofstream(path) << "base = \"h100-80\"\nmemory_gib = 96\n";
  EXPECT_EQ(load_gpu(path).status().message(),
            path + ": key \"base\": value \"h100-80\" is not a GPU preset; did you mean \"h100-80gb\"? (allowed: " +
                join(gpu_presets()) + ")");
  std::ofstream(path) << "base = \"h100-80gb\"\nmemory_gb = 96\n";  // a typo is still an unknown key
  EXPECT_NE(load_gpu(path).status().message().find("memory_gb"), std::string::npos);
}

// What a causal or biased attention call costs beyond its pairs: measured keys, absent 0 (the
// presets' rates were causal calls'), written into a plan only when set, a negative refused in one line.
TEST(LoadGpu, AttentionsExtraWorkKeysReadBackAndRefuseNegatives) {
  EXPECT_EQ(load_gpu("h100-80gb")->attention_causal_extra_keys, 0);
  EXPECT_EQ(load_gpu("h100-80gb")->attention_bias_extra_pairs, 0);
  const std::string path = testing::TempDir() + "/cpu-extra.toml";
  std::ofstream(path) << "base = \"h100-80gb\"\nattention_causal_extra_keys = 268\nattention_bwd_causal_extra_keys = 265\n"
                         "attention_bias_extra_pairs = 0.15\nattention_bwd_bias_extra_pairs = 0.07\n";
  const auto gpu = load_gpu(path);
  ASSERT_TRUE(gpu.ok()) << gpu.status().message();
  EXPECT_EQ(gpu->attention_causal_extra_keys, 268);
  EXPECT_EQ(gpu->attention_bwd_causal_extra_keys, 265);
  EXPECT_EQ(gpu->attention_bias_extra_pairs, 0.15);
  EXPECT_EQ(gpu->attention_bwd_bias_extra_pairs, 0.07);
  PlanSpec plan;
  plan.model = *load_model("qwen3-4b");
  plan.cluster = {*gpu, 4};
  plan.seq_len = 4096;
  plan.stack = *load_trainer("arctic");
  const auto loaded = round_trip(plan);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->cluster.gpu.attention_bwd_causal_extra_keys, 265);
  EXPECT_EQ(loaded->cluster.gpu.attention_bwd_bias_extra_pairs, 0.07);
  std::ofstream(path) << "base = \"h100-80gb\"\nattention_bias_extra_pairs = -0.5\n";
  const std::string message = load_gpu(path).status().message();
  EXPECT_NE(message.find("attention_bias_extra_pairs"), std::string::npos) << message;
  EXPECT_NE(message.find("-0.5"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(LoadGpu, SdpaRatesDefaultToTheFlashRates) {
  const GpuSpec a100 = *load_gpu("a100-80gb");  // no SDPA measurement: the flash rates
  EXPECT_EQ(a100.sdpa_attention_efficiency, a100.attention_efficiency);
  EXPECT_EQ(a100.sdpa_attention_bwd_efficiency, a100.attention_bwd_efficiency);
  const GpuSpec h100 = *load_gpu("h100-80gb");  // cuDNN's kernel measured at about twice FA2's rate
  EXPECT_GT(h100.sdpa_attention_efficiency, 1.5 * h100.attention_efficiency);
}

TEST(Plan, WithoutATrainerKeyIsArctic) {
  const std::string path = testing::TempDir() + "/plan_no_trainer.toml";
  ASSERT_TRUE(write_file_atomically(path, "seq_len = 1024\n[model]\npreset = \"qwen3-4b\"\n[gpu]\npreset = "
                                          "\"h100-80gb\"\n[cluster]\nnum_gpus = 4\n[knobs]\nsp = 4\nzero_stage = 3\n")
                  .is_ok());
  const auto plan = load_plan(path);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->stack.trainer, "arctic");
  EXPECT_TRUE(plan->stack.loop_holds_logits);
  // Without [optimizer]: the defaults (the engine's settings before the section existed).
  EXPECT_EQ(plan->optimizer.lr, 1e-3);
  EXPECT_EQ(plan->optimizer.lr_schedule, LrSchedule::kConstant);
  EXPECT_EQ(plan->optimizer.weight_decay, 0.1);
  EXPECT_EQ(plan->optimizer.grad_clip, 0.0);
}

TEST(Plan, BadPlansNameFileAndKey) {
  const struct {
    std::string file, expected;
  } cases[] = {
      {"bad_plan_sp.toml", "bad_plan_sp.toml: key \"knobs.sp\": value 3 is not valid for qwen3-4b (32 heads, 8 kv heads) on 8 GPUs (allowed sp: 1, 2, 4, 8)"},
      {"bad_plan_ckpt.toml", "key \"knobs.act_ckpt\": value \"sometimes\" is not allowed (allowed: none, full, offload)"},
      // export rounds the buckets to int64: 1e300 does not fit, a negative one makes no sense.
      {"bad_plan_bucket.toml", "bad_plan_bucket.toml: key \"knobs.reduce_bucket_elems\": value 1e+300 is not allowed (allowed: a number from 1 to 1e+15)"},
      {"bad_plan_prefetch.toml", "bad_plan_prefetch.toml: key \"knobs.prefetch_bucket_elems\": value -0.5 is not allowed (allowed: a number from 0 to 1e+15)"},
      // The allowed list holds every knob, also the optional ones the file leaves out.
      {"bad_plan_unknown_knob.toml", "bad_plan_unknown_knob.toml: key \"knobs.tiled_mpl\": unknown key (allowed: sp, cp, cp_comm, zero_stage, offload_optimizer, offload_params, act_ckpt, sp_comm_dtype, precision, tiled_mlp, tiled_loss, micro_batch, grad_accum_steps, reduce_bucket_elems, prefetch_bucket_elems; closest: \"tiled_mlp\")"},
      {"bad_plan_model_value.toml", "bad_plan_model_value.toml: key \"model\": value 5 is not allowed (allowed: a table with preset = \"name\" or all model keys)"},
      {"bad_plan_preset.toml", "bad_plan_preset.toml: key \"model.preset\": value \"gpt-9\" is not a preset or a file (allowed presets: "},
      {"bad_plan_trainer.toml", "bad_plan_trainer.toml: key \"trainer\": value \"deepspeed\" is not a preset or a file "
                                "(allowed presets: arctic, axolotl, engine, hf, liger, megatron, torchtitan, trl, usp; or a trainer TOML file)"},
      {"bad_plan_attention.toml", "bad_plan_attention.toml: key \"attention\": value \"flash4\" is not allowed (allowed: flash2, sdpa, flash3, flex)"},
      {"bad_plan_optimizer_key.toml", "bad_plan_optimizer_key.toml: key \"optimizer.warmpu_steps\": unknown key (allowed: lr, warmup_steps, lr_schedule, min_lr, weight_decay, grad_clip, train_steps, adam_beta1, adam_beta2, adam_eps; closest: \"warmup_steps\")"},
      {"bad_plan_min_lr.toml", "bad_plan_min_lr.toml: key \"optimizer.min_lr\": value 0.001 is above the learning rate 0.0001 (allowed: 0 to lr)"},
      // A beta of 1 never forgets: torch's AdamW refuses it, so does the plan.
      {"bad_plan_adam_beta.toml", "bad_plan_adam_beta.toml: key \"optimizer.adam_beta2\": value 1.0 is not allowed (allowed: a number from 0 to 0.999999)"},
      {"bad_plan_lr_schedule.toml", "bad_plan_lr_schedule.toml: key \"optimizer.lr_schedule\": value \"step\" is not allowed (allowed: constant, cosine, linear)"},
      {"bad_plan_seq.toml", "bad_plan_seq.toml: key \"seq_len\": value 1099511627776 is not allowed (allowed: a whole number from 1 to 1000000000000)"},
  };
  for (const auto& c : cases) {
    const auto plan = load_plan(kData + "/" + c.file);
    ASSERT_FALSE(plan.ok()) << c.file;
    EXPECT_EQ(plan.status().message().find('\n'), std::string::npos);
    EXPECT_NE(plan.status().message().find(c.expected), std::string::npos) << plan.status().message();
  }
}

TEST(Plan, UnknownTopLevelKeyListsEveryTable) {
  const std::string path = testing::TempDir() + "/plan_unknown_top.toml";
  ASSERT_TRUE(write_file_atomically(path, "seq_len = 1024\n[modle]\npreset = \"qwen3-4b\"\n").is_ok());
  const auto plan = load_plan(path);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("key \"modle\": unknown key (allowed: seq_len, trainer, attention, freeze_encoders, model, gpu, cluster, knobs, optimizer, documents; closest: \"model\")"),
            std::string::npos)
      << plan.status().message();
}

// Names reach plan files from TOML strings and config.json folder names: quotes and newlines must
// be escaped, or `plan --out` writes a file that does not read back (or reads back differently).
TEST(Plan, NamesWithQuotesAndNewlinesRoundTrip) {
  PlanSpec p;
  p.model = *load_model("qwen3-4b");
  p.model.name = "evil\"\nvocab_size = 7";
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.gpu.name = "back\\slash\ttab";
  p.cluster.num_gpus = 4;
  p.seq_len = 4096;
  p.knobs.sp = 4;
  const auto back = round_trip(p);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->model.name, p.model.name);
  EXPECT_EQ(back->model.vocab_size, p.model.vocab_size);
  EXPECT_EQ(back->cluster.gpu.name, p.cluster.gpu.name);
}

TEST(WriteFile, EmptyPathIsAnErrorNotAFileNamedDotTmp) {
  const Status s = write_file_atomically("", "x");
  EXPECT_EQ(s.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(s.message(), "\"\": cannot write (an empty file name; allowed: a path to a file)");
}


// `--out link.toml` where link.toml is a symbolic link: the file it names gets the text and the
// link stays a link (a rename onto the link would silently replace it with a plain file).
TEST(WriteFile, SymbolicLinkIsWrittenThroughAndKept) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "write_through_link";
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  write_file_atomically((dir / "real" / "plan.toml").string(), "old\n");
  fs::create_symlink("real/plan.toml", dir / "link.toml");              // relative, as ln -s writes it
  fs::create_symlink(dir / "link.toml", dir / "link_to_link.toml");    // a chain of two
  ASSERT_TRUE(write_file_atomically((dir / "link_to_link.toml").string(), "new\n").is_ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.toml"));
  EXPECT_TRUE(fs::is_symlink(dir / "link_to_link.toml"));
  std::ifstream in(dir / "real" / "plan.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator()), 1);  // no temporary left
}

TEST(WriteFile, SymbolicLinkLoopIsRefused) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "write_link_loop";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink("b", dir / "a");
  fs::create_symlink("a", dir / "b");
  const Status s = write_file_atomically((dir / "a").string(), "x");
  EXPECT_EQ(s.message(), (dir / "a").string() +
                             ": cannot write (more than 40 symbolic links in a row; allowed: a file or a link to one)");
  EXPECT_TRUE(fs::is_symlink(dir / "a"));
}

}  // namespace
}  // namespace spplan
