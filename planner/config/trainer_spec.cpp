#include "planner/config/trainer_spec.hpp"

#include <cctype>

namespace spplan {

const std::vector<std::string>& attention_kernel_names() {
  static const std::vector<std::string> kNames{"flash2", "sdpa", "flash3", "flex"};
  return kNames;
}
std::string to_string(AttentionKernel kernel) { return attention_kernel_names()[static_cast<size_t>(kernel)]; }

const std::vector<std::string>& packed_attention_names() {
  static const std::vector<std::string> kNames{"unread", "varlen", "per_document"};
  return kNames;
}
std::string to_string(PackedAttention mode) { return packed_attention_names()[static_cast<size_t>(mode)]; }

const std::vector<std::string>& layout_names() {
  static const std::vector<std::string> kNames{"none", "ulysses", "ring", "ulysses_ring"};
  return kNames;
}
std::string to_string(Layout layout) { return layout_names()[static_cast<size_t>(layout)]; }

Layout layout_of(const Knobs& k) {
  if (k.cp > 1) return k.sp > 1 ? Layout::kUlyssesRing : Layout::kRing;
  return k.sp > 1 ? Layout::kUlysses : Layout::kNone;
}

bool rule_key_is_boolean(RuleKey key) {
  return key == RuleKey::kTiledMlp || key == RuleKey::kTiledLoss || key == RuleKey::kSandwichNorms ||
         key == RuleKey::kAttentionSinks || key == RuleKey::kGlmMixture || key == RuleKey::kPartialRope ||
         key == RuleKey::kWindowedAndFullLayers || key == RuleKey::kMultimodalEncoders ||
         key == RuleKey::kCausalLmClass || key == RuleKey::kFreezeEncoders;
}

bool rule_key_is_model(RuleKey key) {
  return key == RuleKey::kExperts || key == RuleKey::kSandwichNorms || key == RuleKey::kAttentionSinks ||
         key == RuleKey::kGlmMixture || key == RuleKey::kPartialRope || key == RuleKey::kWindowedAndFullLayers ||
         key == RuleKey::kMultimodalEncoders || key == RuleKey::kCausalLmClass;
}

const std::vector<std::string>& rule_key_names() {
  // In RuleKey's order; the plan keys (plan files' [knobs], flags without "--") where there is one.
  static const std::vector<std::string> kNames{
      "layout",      "sp",         "cp",          "cp_comm",          "zero_stage", "offload_optimizer",
      "offload_params", "act_ckpt", "tiled_mlp",  "tiled_loss",       "micro_batch", "grad_accum_steps",
      "precision",   "nodes",      "attention",   "experts",    "sandwich_norms", "attention_sinks",
      "glm_mixture", "partial_rope", "windowed_and_full_layers", "multimodal_encoders",
      "causal_lm_class", "freeze_encoders"};
  return kNames;
}

const std::vector<std::string>& launch_format_names() {
  static const std::vector<std::string> kNames{"deepspeed", "accelerate", "arctic", "torchrun", "megatron",
                                               "torchtitan", "swift", "axolotl", "trl"};
  return kNames;
}

const std::vector<std::string>& torchrun_program_names() {
  static const std::vector<std::string> kNames{"hf-trainer", "spplan-run"};
  return kNames;
}

namespace {

// The dot-separated parts of a release.
std::vector<std::string> parts_of(const std::string& version) {
  std::vector<std::string> parts{""};
  for (const char c : version) {
    if (c == '.') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

bool is_number(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (const char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool version_less(const std::string& a, const std::string& b) {
  const std::vector<std::string> x = parts_of(a), y = parts_of(b);
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const std::string p = i < x.size() ? x[i] : "0", q = i < y.size() ? y[i] : "0";
    const bool pn = is_number(p), qn = is_number(q);
    if (pn && qn) {
      const long pv = std::stol(p), qv = std::stol(q);
      if (pv != qv) return pv < qv;
    } else if (pn != qn) {
      return pn;  // a number before a name: a build of this checkout is newer than any release
    } else if (p != q) {
      return p < q;
    }
  }
  return false;
}

}  // namespace spplan
