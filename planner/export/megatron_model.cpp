// The model as Megatron-LM's pretrain_gpt.py describes it: its architecture arguments for a
// ModelSpec, and a one-line refusal of what those arguments cannot say, so that the export never
// launches a different model than the plan priced.
//
// Facts from NVIDIA/Megatron-LM at core_v0.16.1 unless a line names another tag; every flag written
// here parses in core_v0.13.1 too, except YaRN's (core_v0.19.0):
//   megatron/training/arguments.py      the flags and their argparse types (--rotary-base type=int)
//   megatron/core/transformer/transformer_config.py  the fields core_transformer_config_from_args
//                                       fills (layernorm_epsilon is "--norm-epsilon")
//   gpt_builders.py (pretrain_gpt.py before core_v0.15; megatron/training/argument_utils.py
//                                       gpt_config_from_args from core_v0.19.0): what reaches GPTModel
//   megatron/core/models/common/embeddings/{rotary,yarn_rotary}_pos_embedding.py  the RoPE tables
#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "planner/export/export_internal.hpp"

namespace spplan::export_internal {
namespace {

// RotaryEmbedding._apply_scaling's llama3 constants, and the factor GPTModel and GPTModelConfig
// default to: no release's pretrain_gpt.py passes --rope-scaling-factor on to the model (only
// rope_scaling=args.use_rope_scaling), so 8 is the factor it trains with.
constexpr double kLlama3Factor = 8.0;
constexpr double kLlama3LowFreqFactor = 1.0;
constexpr double kLlama3HighFreqFactor = 4.0;
constexpr int64_t kLlama3OriginalContext = 8192;

// --rotary-seq-len-interpolation-factor reaches GPTModel only from core_v0.19.0 on
// (gpt_config_from_args; gpt_builders.py before it drops the flag), and --position-embedding-type
// yarn is a choice from then on: the script checks the release it runs in.
constexpr int kScaledRopeMinorRelease = 19;

Status lacks(const std::string& key, const std::string& value, const std::string& why, const std::string& allowed) {
  return Status::invalid("key \"model." + key + "\": value " + value + " cannot be expressed for Megatron-LM (" + why +
                         ") (allowed: " + allowed + ")");
}

// The shortest text that reads back as the same double ("1e-05", "0.9"): a value written for
// Python's float() must be the model's, not a 15-digit rounding of it.
std::string exact(double value) {
  char text[32];
  const auto r = std::to_chars(text, text + sizeof text, value);
  return std::string(text, r.ptr);
}

bool whole(double value) { return std::floor(value) == value && std::fabs(value) <= 0x1p53; }

// YaRN's cos/sin scale as Megatron computes it (_yarn_get_concentration_factor) from the flags
// written below: --mscale and --mscale-all-dim only when the model gives both, as transformers
// then uses them; otherwise Megatron's defaults 1 and 0 give 0.1 ln(factor) + 1, transformers' value.
double yarn_concentration(const RopeScaling& r) {
  const auto m = [&](double mscale) { return r.factor <= 1 ? 1.0 : 0.1 * mscale * std::log(r.factor) + 1.0; };
  return r.mscale > 0 && r.mscale_all_dim > 0 ? m(r.mscale) / m(r.mscale_all_dim) : m(1.0);
}

Status check_llama3(const RopeScaling& r) {
  if (r.factor != kLlama3Factor) {
    return lacks("rope_scaling.factor", exact(r.factor),
                 "pretrain_gpt.py passes GPTModel --use-rope-scaling but not --rope-scaling-factor, so its llama3 "
                 "scaling runs with factor 8",
                 exact(kLlama3Factor));
  }
  const auto fixed = [](const std::string& what) {
    return "its llama3 scaling fixes " + what + " (RotaryEmbedding._apply_scaling)";
  };
  if (r.low_freq_factor != kLlama3LowFreqFactor) {
    return lacks("rope_scaling.low_freq_factor", exact(r.low_freq_factor), fixed("low_freq_factor at 1"),
                 exact(kLlama3LowFreqFactor));
  }
  if (r.high_freq_factor != kLlama3HighFreqFactor) {
    return lacks("rope_scaling.high_freq_factor", exact(r.high_freq_factor), fixed("high_freq_factor at 4"),
                 exact(kLlama3HighFreqFactor));
  }
  if (r.original_max_position_embeddings != kLlama3OriginalContext) {
    return lacks("rope_scaling.original_max_position_embeddings", std::to_string(r.original_max_position_embeddings),
                 fixed("original_max_position_embeddings at 8192"), std::to_string(kLlama3OriginalContext));
  }
  return Status::ok();
}

// The RoPE arguments after --rotary-base.
std::string rope_scaling_args(const ModelSpec& m) {
  const RopeScaling& r = m.rope_scaling;
  switch (r.type) {
    case RopeType::kLlama3:  // the factor is 8 (check_llama3); written so that the script says so
      return " --use-rope-scaling --rope-scaling-factor " + exact(r.factor);
    case RopeType::kLinear:  // RotaryEmbedding divides the positions by it: transformers' linear
      return " --rotary-seq-len-interpolation-factor " + std::to_string(static_cast<int64_t>(r.factor));
    case RopeType::kYarn: {
      // core_v0.19.0's _apply_yarn_config_from_args: the factor is --rotary-scaling-factor, the
      // mscales --mscale and --mscale-all-dim (the MLA flags), the rest --yarn-*.
      std::string out = " --rotary-scaling-factor " + exact(r.factor) + " --yarn-original-max-position-embeddings " +
                        std::to_string(r.original_max_position_embeddings) + " --yarn-beta-fast " +
                        exact(r.beta_fast) + " --yarn-beta-slow " + exact(r.beta_slow);
      if (r.mscale > 0 && r.mscale_all_dim > 0) out += " --mscale " + exact(r.mscale) + " --mscale-all-dim " + exact(r.mscale_all_dim);
      return out + (r.truncate ? " --yarn-correction-range-round-to-int" : " --no-yarn-correction-range-round-to-int");
    }
    case RopeType::kDefault:
    case RopeType::kDynamic: break;
  }
  return "";
}

}  // namespace

Status check_megatron_model(const ModelSpec& m) {
  if (!whole(m.rope_theta)) {
    return lacks("rope_theta", exact(m.rope_theta), "its --rotary-base is parsed as an integer", "a whole number");
  }
  const RopeScaling& r = m.rope_scaling;
  switch (r.type) {
    case RopeType::kDefault: return Status::ok();
    case RopeType::kLlama3: return check_llama3(r);
    case RopeType::kDynamic:
      return lacks("rope_scaling.rope_type", "\"dynamic\"", "its RoPE has no dynamic NTK scaling",
                   "\"default\", \"linear\", \"yarn\", \"llama3\"");
    case RopeType::kLinear:
      if (!whole(r.factor)) {
        return lacks("rope_scaling.factor", exact(r.factor),
                     "its --rotary-seq-len-interpolation-factor is parsed as an integer",
                     "a whole number with rope_type \"linear\"");
      }
      return Status::ok();
    case RopeType::kYarn: {
      const double scale = yarn_concentration(r);
      if (r.attention_factor > 0 && std::fabs(r.attention_factor - scale) > 1e-12 * scale) {
        return lacks("rope_scaling.attention_factor", exact(r.attention_factor),
                     "its YaRN computes the cos/sin scale from factor, mscale and mscale_all_dim: " + exact(scale),
                     "absent, or " + exact(scale));
      }
      return Status::ok();
    }
  }
  return Status::ok();
}

std::string megatron_model_args(const PlanSpec& plan) {
  const ModelSpec& m = plan.model;
  std::ostringstream o;
  o << "--num-layers " << m.num_hidden_layers << " --hidden-size " << m.hidden_size << " --ffn-hidden-size "
    << m.intermediate_size << " --num-attention-heads " << m.num_attention_heads << " --kv-channels " << m.head_dim;
  if (m.num_key_value_heads != m.num_attention_heads) {
    o << " --group-query-attention --num-query-groups " << m.num_key_value_heads;
  }
  // With RoPE, Megatron builds the rotary table for each batch's length (get_rotary_seq_len), so
  // --max-position-embeddings changes no training step; validate_args requires it >= --seq-length,
  // and the checkpoint keeps it for inference and converters: the model's own when larger.
  o << " --seq-length " << plan.seq_len << " --max-position-embeddings "
    << std::max(plan.seq_len, m.max_position_embeddings);
  o << " --position-embedding-type " << (m.rope_scaling.type == RopeType::kYarn ? "yarn" : "rope")
    << " --rotary-base " << static_cast<int64_t>(m.rope_theta)  // whole: check_megatron_model
    << rope_scaling_args(m);
  // The q/k norms are built with `normalization` and layernorm_epsilon on each head
  // (SelfAttention's q_layernorm, hidden_size_per_attention_head): Qwen3's q_norm and k_norm.
  o << " --normalization RMSNorm --norm-epsilon " << exact(m.rms_norm_eps) << (m.qk_norm ? " --qk-layernorm" : "")
    << " --swiglu";
  // --disable-bias-linear drops every linear bias; --add-qkv-bias puts back linear_qkv's alone
  // (SelfAttention: bias=add_bias_linear or add_qkv_bias): Qwen2's q, k and v biases.
  o << " --disable-bias-linear" << (m.attention_bias ? " --add-qkv-bias" : "");
  if (!m.tie_word_embeddings) o << " --untie-embeddings-and-output-weights";
  // A sliding window is not written: check_plan keeps seq_len within it, where attention is full.
  return o.str();
}

std::string megatron_release_guard(const ModelSpec& m) {
  const RopeType t = m.rope_scaling.type;
  if (t != RopeType::kLinear && t != RopeType::kYarn) return "";
  const std::string minor = std::to_string(kScaledRopeMinorRelease);
  return "# " + to_string(t) + " RoPE scaling reaches the model from Megatron-LM core_r0." + minor +
         " on; an older pretrain_gpt.py would " + (t == RopeType::kYarn ? "refuse it" : "train without it") + ".\n" +
         "python3 -c 'import sys; from megatron.core.package_info import MAJOR, MINOR; sys.exit((MAJOR, MINOR) < (0, " +
         minor + "))' || { echo \"pretrain_gpt.py: Megatron-LM core_r0." + minor + " or newer needed for " + to_string(t) +
         " RoPE scaling\" >&2; exit 2; }\n";
}

}  // namespace spplan::export_internal
