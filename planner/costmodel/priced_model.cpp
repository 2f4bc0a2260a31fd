#include "planner/costmodel/priced_model.hpp"

#include "planner/config/rope_scaling.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/costmodel/memory.hpp"

namespace spplan::costmodel {
namespace {

// The positions: the scaling, its base, how much of each head rotates, and q/k/v biases.
std::string rope_line(const ModelSpec& m) {
  return "RoPE: " + rope_text(m.rope_scaling) + " (theta " + format_number(m.rope_theta) + ")" +
         (m.partial_rotary_factor < 1 ? " on " + format_number(m.partial_rotary_factor) + " of each head" : "") +
         (m.attention_bias ? "; q/k/v biases" : "");
}

// What a mixture of experts is priced as: its experts, a shared expert, the dense layers, the router.
std::string mixture_line(const ModelSpec& m) {
  if (!m.is_moe()) return "";
  std::string text = "mixture: " + std::to_string(m.num_experts) + " experts " + std::to_string(m.moe_intermediate_size) +
                     " wide, " + std::to_string(m.experts_per_token) + " a token";
  if (m.shared_expert_intermediate_size > 0) {
    text += ", a shared expert " + std::to_string(m.shared_expert_intermediate_size) + " wide";
  }
  if (m.first_dense_layers > 0) {
    const std::string layers = m.first_dense_layers == 1 ? "layer 0" : "layers 0-" + std::to_string(m.first_dense_layers - 1);
    text += "; " + layers + " dense (" + std::to_string(m.intermediate_size) + " wide)";
  }
  text += m.router_sigmoid ? "; sigmoid router" : m.router_softmax_after_topk ? "; softmax over the top k" : "";
  if (m.output_router_logits) text += "; load-balancing loss";
  return text;
}

// A multimodal config's encoders beside its language model: counted (ModelSpec::encoder_params),
// trained, frozen, or holding weights only where the layout makes no state for them
// (encoders_weights_only), or named as not counted (encoders_left_out).
std::string encoders_line(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  if (!m.has_encoders()) return "";
  const bool frozen = p.encoders_frozen();
  const bool weights_only = encoders_weights_only(p);
  // Frozen by the trainer's own default (ms-swift's), or by the plan (--freeze-encoders).
  const bool trainers_default = record_of(p).facts.freezes_encoders;
  std::string text = "model: the language model of a multimodal config";
  if (m.encoder_params > 0) {
    std::string held = "counted as trained (weights, gradients, optimizer state";
    if (frozen) {
      held = std::string("frozen") + (trainers_default ? " by " + p.stack.trainer : "") +
             " (weights only, no gradients or optimizer state";
    } else if (weights_only) {
      held = "trained but holding weights only (this layout makes no gradient or optimizer state for a parameter "
             "that never runs";
    }
    text += " and its vision encoder, " + format_number("%.2f", m.encoder_params / 1e9) + "B parameters " + held +
            "; a text step never runs them)";
  }
  if (m.encoders_left_out) {
    text += std::string(m.encoder_params > 0 ? "; another encoder" : "; the encoders beside it (vision, audio)") +
            " not counted (" +
            (frozen         ? "frozen too, their weights add to memory"
             : weights_only ? "trained too, their weights add to memory"
                            : "trained too, their weights, gradients and optimizer state add to memory") +
            ")";
  }
  return text;
}

// A window the sequence is longer than: the layers that attend over it (the others full causal).
std::string window_line(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  if (!m.windows(p.seq_len)) return "";
  return "attention: a " + std::to_string(m.sliding_window) + "-token sliding window on " +
         std::to_string(m.windowed_layers()) + " of " + std::to_string(m.num_hidden_layers) + " layers";
}

}  // namespace

std::vector<std::string> PricedModelLines::present() const {
  std::vector<std::string> lines;
  for (const std::string* line : {&rope, &encoders, &window, &mixture}) {
    if (!line->empty()) lines.push_back(*line);
  }
  return lines;
}

PricedModelLines priced_model_lines(const PlanSpec& p) {
  return {rope_line(p.model), encoders_line(p), window_line(p), mixture_line(p.model)};
}

}  // namespace spplan::costmodel
