// The Megatron-LM export describes the plan's model: RoPE base and scaling, norm epsilon, q/k norms,
// q/k/v biases; and a table of models its pretrain_gpt.py arguments cannot describe, refused with the
// exact line. (tests/scripts/export_check_test.py reads the same flags with megatron-core's own
// TransformerConfig and RoPE classes.)
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/export/export.hpp"

namespace spplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Ulysses over 4 GPUs of one node (every preset's head counts divide by 4), ZeRO-3, full recompute.
PlanSpec plan_of(const std::string& model, int64_t seq_len = 65536) {
  PlanSpec p;
  p.stack = trainer_stack("megatron");
  p.model = load_model(model).value();
  p.cluster.gpu = load_gpu("h100-80gb").value();
  p.cluster.num_gpus = 4;
  p.seq_len = seq_len;
  p.knobs.sp = 4;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
  return p;
}

std::string megatron(const PlanSpec& plan) {
  auto text = export_plan(plan, ExportFormat::kMegatron);
  EXPECT_TRUE(text.ok()) << plan.model.name << ": " << text.status().message();
  return text.ok() ? *text : std::string();
}

// The text after `flag ` up to the next space.
std::string value_of(const std::string& script, const std::string& flag) {
  const size_t at = script.find(" " + flag + " ");
  if (at == std::string::npos) return "";
  const size_t begin = at + flag.size() + 2;
  return script.substr(begin, script.find(' ', begin) - begin);
}

TEST(ExportMegatron, Llama31CarriesItsLlama3RopeScaling) {
  const std::string sh = megatron(plan_of("llama-3.1-8b", 1 << 20));
  EXPECT_THAT(sh, HasSubstr(" --seq-length 1048576 --max-position-embeddings 1048576 --position-embedding-type rope "
                            "--rotary-base 500000 --use-rope-scaling --rope-scaling-factor 8 --normalization RMSNorm "
                            "--norm-epsilon 1e-05 --swiglu --disable-bias-linear --untie-embeddings-and-output-weights "));
  EXPECT_THAT(sh, Not(HasSubstr("--qk-layernorm")));
  EXPECT_THAT(sh, Not(HasSubstr("--add-qkv-bias")));
  EXPECT_THAT(sh, Not(HasSubstr("core_r0.19")));  // llama3 scaling runs in every release from core_r0.13
}

TEST(ExportMegatron, Qwen3CarriesItsQkNorms) {
  const std::string sh = megatron(plan_of("qwen3-4b"));
  EXPECT_THAT(sh, HasSubstr(" --position-embedding-type rope --rotary-base 1000000 --normalization RMSNorm "
                            "--norm-epsilon 1e-06 --qk-layernorm --swiglu --disable-bias-linear --tensor-model"));
  EXPECT_THAT(sh, Not(HasSubstr("--use-rope-scaling")));
  EXPECT_THAT(sh, Not(HasSubstr("--untie-embeddings-and-output-weights")));  // Qwen3-4B ties them
}

TEST(ExportMegatron, Qwen25CarriesItsQkvBiasesAndItsContext) {
  const std::string sh = megatron(plan_of("qwen2.5-7b"));
  // 65536 tokens trained, 131072 the model's context: the larger one (RoPE is built per batch).
  EXPECT_THAT(sh, HasSubstr(" --num-layers 28 --hidden-size 3584 --ffn-hidden-size 18944 --num-attention-heads 28 "
                            "--kv-channels 128 --group-query-attention --num-query-groups 4 --seq-length 65536 "
                            "--max-position-embeddings 131072 "));
  EXPECT_THAT(sh, HasSubstr(" --norm-epsilon 1e-06 --swiglu --disable-bias-linear --add-qkv-bias "
                            "--untie-embeddings-and-output-weights "));
}

// Every preset exports, and --norm-epsilon reads back as the model's epsilon, bit for bit.
TEST(ExportMegatron, EveryPresetCarriesItsNormEpsilon) {
  for (const std::string& name : model_presets()) {
    const int64_t window = load_model(name)->sliding_window;  // Megatron's export writes no window: a sequence inside it
    const PlanSpec p = plan_of(name, window > 0 ? std::min<int64_t>(4096, window) : 4096);
    if (p.model.is_moe()) continue;  // Megatron-LM's record refuses mixtures (configs/trainers/megatron.toml)
    const std::string sh = megatron(p);
    const std::string eps = value_of(sh, "--norm-epsilon");
    ASSERT_FALSE(eps.empty()) << name;
    EXPECT_EQ(std::stod(eps), p.model.rms_norm_eps) << name << ": " << eps;
    EXPECT_EQ(std::stod(value_of(sh, "--rotary-base")), p.model.rope_theta) << name;
  }
}

// A mixture is refused by Megatron-LM's record, naming the model and its experts.
TEST(ExportMegatron, AMixtureOfExpertsIsRefusedWithOneLine) {
  const PlanSpec p = plan_of("mixtral-8x7b", 4096);
  const auto text = export_plan(p, ExportFormat::kMegatron);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message().rfind("key \"model\": value \"mixtral-8x7b\" (8 experts) is not run by trainer \"megatron\"", 0), 0u)
      << text.status().message();
  EXPECT_NE(text.status().message().find("allowed: a dense model, or a trainer that runs experts"), std::string::npos);
}

TEST(ExportMegatron, RotaryBaseIsWrittenAsTheWholeNumberArgparseTakes) {
  PlanSpec p = plan_of("qwen3-4b");
  for (const auto& [theta, text] : {std::pair{1e6, "1000000"}, std::pair{10000.0, "10000"},
                                    std::pair{1e15, "1000000000000000"}}) {
    p.model.rope_theta = theta;
    EXPECT_EQ(value_of(megatron(p), "--rotary-base"), text);
  }
}

TEST(ExportMegatron, YarnNeedsCoreR019AndCarriesEachParameter) {
  PlanSpec p = plan_of("qwen2.5-7b");
  p.model.rope_scaling.type = RopeType::kYarn;  // Qwen2.5's model card: factor 4 over 32K
  p.model.rope_scaling.factor = 4.0;
  p.model.rope_scaling.original_max_position_embeddings = 32768;
  const std::string sh = megatron(p);
  EXPECT_THAT(sh, HasSubstr(" --position-embedding-type yarn --rotary-base 1000000 --rotary-scaling-factor 4 "
                            "--yarn-original-max-position-embeddings 32768 --yarn-beta-fast 32 --yarn-beta-slow 1 "
                            "--yarn-correction-range-round-to-int --normalization RMSNorm "));
  EXPECT_THAT(sh, Not(HasSubstr("--mscale")));  // Megatron's defaults give transformers' 0.1 ln(4) + 1
  EXPECT_THAT(sh, HasSubstr("\npython3 -c 'import sys; from megatron.core.package_info import MAJOR, MINOR; "
                            "sys.exit((MAJOR, MINOR) < (0, 19))' || {"));
  // DeepSeek's form: both mscales given, so both are written; truncate false is the other flag.
  p.model.rope_scaling.mscale = 0.707;
  p.model.rope_scaling.mscale_all_dim = 0.707;
  p.model.rope_scaling.truncate = false;
  const std::string ds = megatron(p);
  EXPECT_THAT(ds, HasSubstr(" --yarn-beta-slow 1 --mscale 0.707 --mscale-all-dim 0.707 "
                            "--no-yarn-correction-range-round-to-int "));
  // An attention_factor equal to the one Megatron computes (0.1 ln(4) + 1 with mscale 1) is taken.
  p.model.rope_scaling = {};
  p.model.rope_scaling.type = RopeType::kYarn;
  p.model.rope_scaling.factor = 4.0;
  p.model.rope_scaling.original_max_position_embeddings = 32768;
  p.model.rope_scaling.attention_factor = 0.1 * std::log(4.0) + 1.0;
  EXPECT_TRUE(export_plan(p, ExportFormat::kMegatron).ok());
}

TEST(ExportMegatron, LinearScalingIsTheIntegerInterpolationFactor) {
  PlanSpec p = plan_of("qwen3-4b");
  p.model.rope_scaling.type = RopeType::kLinear;
  p.model.rope_scaling.factor = 4.0;
  const std::string sh = megatron(p);
  EXPECT_THAT(sh, HasSubstr(" --position-embedding-type rope --rotary-base 1000000 "
                            "--rotary-seq-len-interpolation-factor 4 --normalization "));
  EXPECT_THAT(sh, HasSubstr("# linear RoPE scaling reaches the model from Megatron-LM core_r0.19 on; an older "
                            "pretrain_gpt.py would train without it.\n"));
}

TEST(ExportMegatron, RefusalsTable) {
  struct Case {
    std::string name;
    ModelSpec model;
    std::string message;
  };
  const ModelSpec llama = load_model("llama-3.1-8b").value();
  const ModelSpec qwen = load_model("qwen3-4b").value();
  std::vector<Case> cases;
  const auto add = [&](const std::string& name, ModelSpec m, const std::string& message) {
    cases.push_back({name, std::move(m), message});
  };
  ModelSpec m = llama;
  m.rope_scaling.factor = 32.0;  // Llama 3.2's
  add("llama3 factor 32", m,
      "key \"model.rope_scaling.factor\": value 32 cannot be expressed for Megatron-LM (pretrain_gpt.py passes "
      "GPTModel --use-rope-scaling but not --rope-scaling-factor, so its llama3 scaling runs with factor 8) "
      "(allowed: 8)");
  m = llama;
  m.rope_scaling.low_freq_factor = 2.0;
  add("llama3 low_freq_factor", m,
      "key \"model.rope_scaling.low_freq_factor\": value 2 cannot be expressed for Megatron-LM (its llama3 scaling "
      "fixes low_freq_factor at 1 (RotaryEmbedding._apply_scaling)) (allowed: 1)");
  m = llama;
  m.rope_scaling.high_freq_factor = 8.0;
  add("llama3 high_freq_factor", m,
      "key \"model.rope_scaling.high_freq_factor\": value 8 cannot be expressed for Megatron-LM (its llama3 scaling "
      "fixes high_freq_factor at 4 (RotaryEmbedding._apply_scaling)) (allowed: 4)");
  m = llama;
  m.rope_scaling.original_max_position_embeddings = 4096;
  add("llama3 original context", m,
      "key \"model.rope_scaling.original_max_position_embeddings\": value 4096 cannot be expressed for Megatron-LM "
      "(its llama3 scaling fixes original_max_position_embeddings at 8192 (RotaryEmbedding._apply_scaling)) "
      "(allowed: 8192)");
  m = qwen;
  m.rope_scaling.type = RopeType::kDynamic;
  m.rope_scaling.factor = 2.0;
  add("dynamic", m,
      "key \"model.rope_scaling.rope_type\": value \"dynamic\" cannot be expressed for Megatron-LM (its RoPE has no "
      "dynamic NTK scaling) (allowed: \"default\", \"linear\", \"yarn\", \"llama3\")");
  m = qwen;
  m.rope_scaling.type = RopeType::kLinear;
  m.rope_scaling.factor = 2.5;
  add("linear 2.5", m,
      "key \"model.rope_scaling.factor\": value 2.5 cannot be expressed for Megatron-LM (its "
      "--rotary-seq-len-interpolation-factor is parsed as an integer) (allowed: a whole number with rope_type "
      "\"linear\")");
  m = qwen;
  m.rope_scaling.type = RopeType::kYarn;
  m.rope_scaling.factor = 4.0;
  m.rope_scaling.original_max_position_embeddings = 32768;
  m.rope_scaling.attention_factor = 1.5;
  add("yarn attention_factor", m,
      "key \"model.rope_scaling.attention_factor\": value 1.5 cannot be expressed for Megatron-LM (its YaRN computes "
      "the cos/sin scale from factor, mscale and mscale_all_dim: 1.138629436111989) (allowed: absent, or "
      "1.138629436111989)");
  m = qwen;
  m.rope_theta = 10000.5;
  add("fractional theta", m,
      "key \"model.rope_theta\": value 10000.5 cannot be expressed for Megatron-LM (its --rotary-base is parsed as "
      "an integer) (allowed: a whole number)");
  for (const Case& c : cases) {
    PlanSpec p = plan_of("qwen3-4b");
    p.model = c.model;
    auto r = export_plan(p, ExportFormat::kMegatron);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().message(), c.message) << c.name;
    // The other trainers' formats take the same model: the refusal is Megatron's alone.
    p.stack = trainer_stack("arctic");
    EXPECT_TRUE(export_plan(p, ExportFormat::kDeepSpeed).ok()) << c.name;
  }
}

}  // namespace
}  // namespace spplan
