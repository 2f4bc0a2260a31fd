// RoPE scaling, Qwen2 biases and Mistral windows read from config.json (rope_scaling.hpp,
// config_json_loader.cpp), and carried through plan files.
#include "planner/config/rope_scaling.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"

namespace spplan {
namespace {

using Json = nlohmann::json;

Result<ModelSpec> read(const Json& j) {
  ModelSpec m;
  SPPLAN_RETURN_IF_ERROR(read_rope_config(ConfigKeys("c.json", j), &m));
  return m;
}

// The same scaling in transformers 4's layout (rope_theta beside "rope_scaling", whose type key
// may be the older "type") and in 5's ("rope_parameters" holding both).
TEST(RopeScaling, BothLayoutsGiveTheSameScaling) {
  const Json llama3 = {{"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  Json v4 = {{"rope_theta", 500000.0}, {"max_position_embeddings", 131072}, {"rope_scaling", llama3}};
  v4["rope_scaling"]["rope_type"] = "llama3";
  Json v4_old = v4;
  v4_old["rope_scaling"].erase("rope_type");
  v4_old["rope_scaling"]["type"] = "llama3";
  Json v5 = {{"max_position_embeddings", 131072}, {"rope_parameters", llama3}};
  v5["rope_parameters"]["rope_type"] = "llama3";
  v5["rope_parameters"]["rope_theta"] = 500000.0;
  for (const Json& j : {v4, v4_old, v5}) {
    const auto m = read(j);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->rope_theta, 500000.0);
    EXPECT_EQ(m->max_position_embeddings, 131072);
    EXPECT_EQ(m->rope_scaling.type, RopeType::kLlama3);
    EXPECT_EQ(m->rope_scaling.factor, 8.0);
    EXPECT_EQ(m->rope_scaling.high_freq_factor, 4.0);
    EXPECT_EQ(m->rope_scaling.original_max_position_embeddings, 8192);
  }
  EXPECT_EQ(rope_text(read(v5)->rope_scaling),
            "llama3 (factor 8, high_freq_factor 4, low_freq_factor 1, original_max_position_embeddings 8192)");
}

TEST(RopeScaling, YarnTakesTheContextWhenNoOriginalIsGivenAndKeepsItsOptions) {
  const auto m = read({{"max_position_embeddings", 32768},
                       {"rope_scaling", {{"type", "yarn"}, {"factor", 4.0}, {"beta_fast", 16}, {"truncate", false}}}});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->rope_scaling.type, RopeType::kYarn);
  EXPECT_EQ(m->rope_scaling.original_max_position_embeddings, 32768);  // transformers 4's fallback
  EXPECT_EQ(m->rope_scaling.beta_fast, 16.0);
  EXPECT_EQ(m->rope_scaling.beta_slow, 1.0);
  EXPECT_FALSE(m->rope_scaling.truncate);
}

TEST(RopeScaling, DefaultAndNullAreNoScaling) {
  for (const Json& j : {Json{{"rope_scaling", nullptr}}, Json{{"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e6}}}},
                        Json{{"rope_scaling", {{"rope_type", "default"}}}}, Json::object()}) {
    const auto m = read(j);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(m->rope_scaling.type, RopeType::kDefault) << j.dump();
  }
  EXPECT_EQ(rope_text(RopeScaling{}), "default");
  EXPECT_TRUE(rope_scaling_json(RopeScaling{}).is_null());
}

// The table of bad scalings and the one line each gives: file, key, value, what is allowed.
TEST(RopeScaling, BadScalingsGiveOneLineNamingKeyValueAndAllowed) {
  const struct {
    Json config;
    std::string expected;
  } cases[] = {
      {{{"rope_scaling", {{"rope_type", "longrope"}, {"factor", 2.0}}}},
       "c.json: key \"rope_scaling.rope_type\": value \"longrope\" is not allowed (allowed: \"default\", \"linear\", "
       "\"dynamic\", \"yarn\", \"llama3\")"},
      {{{"rope_parameters", {{"rope_type", 3}}}},
       "c.json: key \"rope_parameters.rope_type\": value 3 is not allowed (allowed: \"default\""},
      {{{"rope_scaling", {{"rope_type", "linear"}}}},
       "c.json: key \"rope_scaling.factor\": missing (required by rope_type \"linear\")"},
      {{{"rope_scaling", {{"rope_type", "linear"}, {"factor", 0.5}}}},
       "c.json: key \"rope_scaling.factor\": value 0.5 is not allowed (allowed: a number from 1 to 1e+15)"},
      {{{"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 2.0}}}},
       "c.json: key \"max_position_embeddings\": missing (required by rope_type \"dynamic\")"},
      {{{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 2.0}}}},
       "c.json: key \"rope_scaling.original_max_position_embeddings\": missing (required by rope_type \"yarn\")"},
      {{{"rope_scaling",
         {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 4.0}, {"high_freq_factor", 1.0},
          {"original_max_position_embeddings", 8192}}}},
       "c.json: key \"rope_scaling.high_freq_factor\": value 1.0 is not allowed (allowed: a number above "
       "low_freq_factor 4)"},
      {{{"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                          {"original_max_position_embeddings", -1}}}},
       "c.json: key \"rope_scaling.original_max_position_embeddings\": value -1 is not allowed (allowed: a whole "
       "number from 1 to"},
      {{{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 2.0}, {"original_max_position_embeddings", 64}, {"truncate", "no"}}}},
       "c.json: key \"rope_scaling.truncate\": value \"no\" is not allowed (allowed: true, false)"},
      {{{"rope_parameters", {{"rope_theta", 1e4}, {"partial_rotary_factor", 1.5}}}},
       "c.json: key \"rope_parameters.partial_rotary_factor\": value 1.5 is not allowed (allowed: a number above 0, at most 1)"},
      {{{"rope_scaling", "llama3"}}, "c.json: key \"rope_scaling\": value \"llama3\" is not allowed (allowed: an object or null)"},
      {{{"rope_theta", -1}}, "c.json: key \"rope_theta\": value -1 is not allowed (allowed: a number from 1e-15 to 1e+15)"},
  };
  for (const auto& c : cases) {
    const auto m = read(c.config);
    ASSERT_FALSE(m.ok()) << c.config.dump();
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
    EXPECT_NE(m.status().message().find(c.expected), std::string::npos) << m.status().message();
  }
}

std::string write_json(const std::string& name, const Json& j) {
  const std::string dir = std::filesystem::temp_directory_path() / ("spplan_rope_" + name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << j.dump();
  return dir + "/config.json";
}

Json dense(const std::string& type) {
  return {{"model_type", type},  {"num_hidden_layers", 2}, {"hidden_size", 64},   {"num_attention_heads", 4},
          {"num_key_value_heads", 2}, {"intermediate_size", 128}, {"vocab_size", 256}};
}

// Qwen2's q/k/v biases come from the model type (no key says so) and are counted; Mistral's
// window is 4096 when config.json omits it (transformers' MistralConfig default), none when null.
// A model TOML's [rope_scaling] is read by the node's type: a float beyond int64's range where a
// whole number belongs is one line, not toml++'s undefined float-to-integer conversion (found by
// scripts/fuzz.sh on model_toml; fuzz/regressions/model_toml/rope_scaling_float_beyond_int64_cast).
TEST(LoadModel, ATomlRopeTableKeepsEachValuesType) {
  const std::string path = std::filesystem::temp_directory_path() / "spplan_rope_float.toml";
  std::ofstream(path) << "name = \"t\"\nnum_hidden_layers = 2\nhidden_size = 64\nnum_attention_heads = 4\n"
                         "intermediate_size = 128\nvocab_size = 100\nmax_position_embeddings = 4096\n[rope_scaling]\n"
                         "rope_type = \"llama3\"\nfactor = 8.0\nlow_freq_factor = 1.0\nhigh_freq_factor = 4.0\n"
                         "original_max_position_embeddings = 1e56\n";
  EXPECT_EQ(load_model(path).status().message(),
            path + ": key \"rope_scaling.original_max_position_embeddings\": value 1e+56 is not allowed (allowed: a "
                   "whole number from 1 to 1099511627776)");
  std::remove(path.c_str());
}

TEST(LoadModel, Qwen2BiasesAndMistralWindows) {
  const auto qwen2 = load_model(write_json("qwen2", dense("qwen2")));
  ASSERT_TRUE(qwen2.ok()) << qwen2.status().message();
  EXPECT_TRUE(qwen2->attention_bias);
  EXPECT_EQ(qwen2->sliding_window, 0);
  const auto llama = load_model(write_json("llama", dense("llama")));
  ASSERT_TRUE(llama.ok());
  EXPECT_FALSE(llama->attention_bias);
  const auto mistral = load_model(write_json("mistral", dense("mistral")));
  ASSERT_TRUE(mistral.ok());
  EXPECT_EQ(mistral->sliding_window, 4096);
  Json no_window = dense("mistral");
  no_window["sliding_window"] = nullptr;
  EXPECT_EQ(load_model(write_json("mistral_null", no_window))->sliding_window, 0);
  const auto preset = load_model("qwen2.5-7b");
  ASSERT_TRUE(preset.ok()) << preset.status().message();
  EXPECT_TRUE(preset->attention_bias);
  const auto llama31 = load_model("llama-3.1-8b");
  ASSERT_TRUE(llama31.ok());
  EXPECT_EQ(llama31->rope_scaling.type, RopeType::kLlama3);
  EXPECT_EQ(llama31->rope_scaling.original_max_position_embeddings, 8192);
}

// A window at least as long as the sequence is full causal attention. A shorter one runs where the
// stack hands it to a FlashAttention kernel; the engine's full causal attention, SDPA's
// dense mask and a ring that windows each block at its own positions are refused, each with one line.
TEST(PlanRules, ASequenceLongerThanTheWindowRunsWhereTheWindowIsRun) {
  PlanSpec plan;
  plan.model = *load_model("mistral-7b");
  plan.model.sliding_window = 4096;
  plan.cluster.gpu = *load_gpu("h100-80gb");
  plan.cluster.num_gpus = 8;
  plan.knobs.sp = 8;
  plan.seq_len = 4096;
  plan.stack = trainer_stack("torchtitan");
  EXPECT_TRUE(check_plan_shape(plan, flag_where).is_ok());
  plan.seq_len = 8192;
  EXPECT_EQ(check_plan_shape(plan, flag_where).message(),
            "--seq: value 8192 is longer than mistral-7b's sliding_window 4096, and trainer \"torchtitan\" runs full "
            "causal attention (allowed: at most 4096 tokens, or a trainer that runs the window)");
  // The engine runs the window in masked blocks through SDPA (window_attention.hpp), on every layer
  // or none: a model that windows some layers only is refused.
  plan.stack = trainer_stack("engine");
  settle_layout_attention(&plan);
  ASSERT_EQ(plan.stack.attention, AttentionKernel::kSdpa);
  EXPECT_TRUE(check_plan(plan, flag_where).is_ok()) << check_plan(plan, flag_where).message();
  plan.model.full_attention_layers = 8;
  EXPECT_EQ(check_plan(plan, flag_where).message(),
            "--model: value \"mistral-7b\" (a 4096-token window on 24 of 32 layers) is not run by trainer \"engine\" (its "
            "layers all window or none (model.cpp passes the model's one sliding_window to every layer's attention); "
            "allowed: at most 4096 tokens, or a trainer that windows some layers only)");
  plan.model.full_attention_layers = 0;
  plan.stack = trainer_stack("arctic");  // FlashAttention 2 with window_size
  EXPECT_TRUE(check_plan(plan, flag_where).is_ok()) << check_plan(plan, flag_where).message();
  plan.stack.attention = AttentionKernel::kSdpa;
  EXPECT_EQ(check_plan_shape(plan, flag_where).message(),
            "--seq: value 8192 is longer than mistral-7b's sliding_window 4096, which SDPA runs through a dense [q, kv] "
            "mask, not priced (allowed: at most 4096 tokens, or --attention flash2, flash3 or flex)");
  plan.stack = trainer_stack("usp");  // ms-swift's ring hands the window to each block at its own positions
  plan.knobs.sp = 1;
  plan.knobs.cp = 8;
  EXPECT_EQ(check_plan_shape(plan, flag_where).message(),
            "--seq: value 8192 is longer than mistral-7b's sliding_window 4096, and trainer \"usp\"'s ring does not "
            "window each query at its place in the sequence (allowed: at most 4096 tokens, or cp 1)");
}

// Axolotl's ring (ring-flash-attn's llama3 all-gather) windows each query at its place in the
// sequence, but only where the rank's shard is longer than the window: a sequence longer than the
// window over shards within it would train full causal attention.
TEST(PlanRules, AxolotlsRingRunsTheWindowOverShardsLongerThanIt) {
  PlanSpec plan;
  plan.model = *load_model("mistral-7b");
  plan.model.sliding_window = 4096;  // Mistral-7B-v0.1's (the preset is v0.3, which has none)
  plan.cluster.gpu = *load_gpu("h100-80gb");
  plan.cluster.num_gpus = 8;
  plan.stack = trainer_stack("axolotl");
  plan.knobs.cp = 8;
  plan.knobs.cp_comm = CpComm::kAllGather;
  plan.seq_len = 65536;  // 8192 tokens a rank, past the 4096 window
  EXPECT_TRUE(check_plan_shape(plan, flag_where).is_ok()) << check_plan_shape(plan, flag_where).message();
  plan.seq_len = 32768;  // 4096 a rank: no window
  EXPECT_EQ(check_plan_shape(plan, flag_where).message(),
            "--cp: value 8 leaves 4096 tokens a rank, not more than mistral-7b's sliding_window 4096, where trainer "
            "\"axolotl\"'s ring runs no window (allowed: cp at most 7)");
  plan.seq_len = 4096;  // inside the window: causal attention is the model's
  EXPECT_TRUE(check_plan_shape(plan, flag_where).is_ok());
}

// A plan file carries the scaling, the biases and the window: `spplan run --plan` trains the model
// the plan priced.
TEST(LoadPlan, ModelExtrasSurviveThePlanFile) {
  PlanSpec plan;
  plan.model = *load_model("qwen2.5-7b");
  plan.model.rope_scaling.type = RopeType::kYarn;
  plan.model.rope_scaling.factor = 4.0;
  plan.model.rope_scaling.original_max_position_embeddings = 32768;
  plan.model.sliding_window = 131072;
  plan.cluster.gpu = *load_gpu("h100-80gb");
  plan.cluster.num_gpus = 4;
  plan.knobs.sp = 4;
  plan.seq_len = 65536;
  plan.optimizer.train_steps = 100;
  const std::string path = std::filesystem::temp_directory_path() / "spplan_rope_plan.toml";
  std::ofstream(path) << plan_to_toml(plan);
  const auto back = load_plan(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->model.attention_bias);
  EXPECT_EQ(back->model.sliding_window, 131072);
  EXPECT_EQ(back->model.max_position_embeddings, 131072);
  EXPECT_TRUE(back->model.rope_scaling == plan.model.rope_scaling);
  EXPECT_EQ(back->optimizer.train_steps, 100);
  EXPECT_EQ(plan_to_toml(*back), plan_to_toml(plan));
}

}  // namespace
}  // namespace spplan
