#include "planner/config/config_json_loader.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/config/config_keys.hpp"
#include "planner/config/family_defaults.hpp"
#include "planner/config/json_file.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/model_families.hpp"
#include "planner/config/model_name.hpp"
#include "planner/config/multimodal_encoders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

// The keys a config.json without model_type may hold: those spplan reads (the decoder's shapes,
// window, mixture, RoPE and name) and those it checks, priced as absent. Such a file is not one
// transformers loads (AutoConfig needs model_type) but shapes written by hand, read as a model TOML
// is; a key beyond these may be a layer spplan has not read (Llama 4's text config, which names no
// model_type, holds interleave_moe_layer_step and attention_chunk_size) and would price wrong.
const std::set<std::string>& keys_read_without_family() {
  static const std::set<std::string> keys = {
      "name", "_name_or_path", "model_type", "num_hidden_layers", "hidden_size", "num_attention_heads",
      "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size", "tie_word_embeddings",
      "attention_bias", "hidden_act", "hidden_activation", "rms_norm_eps", "rope_theta", "rope_scaling",
      "rope_parameters", "max_position_embeddings", "partial_rotary_factor", "sliding_window",
      "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern", "num_local_experts",
      "num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers",
      "output_router_logits", "norm_topk_prob", "router_aux_loss_coef", "router_jitter_noise",
      "n_routed_experts", "moe_num_experts", "shared_expert_intermediate_size"};
  return keys;
}

// A config.json's family is one with a record (family_defaults.hpp); a config without model_type
// is read only when every key it holds (not null) is one keys_read_without_family() lists.
Status check_priced_family(const ConfigKeys& c, const ModelFamily* family) {
  if (family != nullptr) return Status::ok();
  const std::string priced = join(priced_model_types());
  if (c.present("model_type")) {
    return c.refuse("model_type", c.json()["model_type"], "is a family whose layers spplan has not read, and would price wrong",
                    priced + "; or a model TOML file with the shapes of a decoder of their layers");
  }
  for (const auto& [key, value] : c.json().items()) {
    if (!value.is_null() && keys_read_without_family().count(key) == 0) {
      return c.say("model_type", "missing",
                   "one of " + priced + "; a file without it is read only when every key it holds is one spplan prices");
    }
  }
  return Status::ok();
}

// Mixtures of experts spplan prices: every layer routed over one set of SwiGLU experts (Mixtral's
// num_local_experts, Qwen3-MoE's num_experts: read_moe), and GLM-4.5's (read_glm_moe). Not
// priced: DeepSeek's (n_routed_experts beside its softmax router and latent attention), DBRX's
// (moe_num_experts), Qwen2-MoE's gated shared expert. 0 or 1 expert is a dense MLP.
Status check_priced_experts(const ConfigKeys& c) {
  const nlohmann::json& j = c.json();
  for (const char* key : {"n_routed_experts", "moe_num_experts"}) {
    if (c.model_type() == "glm4_moe" && std::string(key) == "n_routed_experts") continue;  // read_glm_moe
    // Compared unsigned: 2^64 - 1 experts read as int64_t wraps to -1, which passed as dense.
    if (c.present(key) && !(j[key].is_number_unsigned() && j[key].get<uint64_t>() <= 1)) {
      return c.refuse(key, j[key], "is a mixture of experts spplan cannot price yet",
                      "absent, null, 0 or 1; experts as Mixtral's num_local_experts, Qwen3-MoE's num_experts or "
                      "GLM-4.5's n_routed_experts with model_type \"glm4_moe\"");
    }
  }
  const char* shared = "shared_expert_intermediate_size";
  if (c.present(shared) && !(j[shared].is_number_unsigned() && j[shared].get<uint64_t>() == 0)) {
    return c.refuse(shared, j[shared], "is a shared expert, which spplan cannot price yet", "absent, null or 0");
  }
  return Status::ok();
}

// The architecture keys of config.json files that change what a step costs in ways the costmodel
// does not count. Silently pricing such a model as the dense SwiGLU decoder it is not gives a wrong
// answer (a Mixtral 8x7B read as a 7B has about 6.6x too few parameters), so each refuses the file.
Status check_priceable(const ConfigKeys& c, const ModelFamily* family) {
  const nlohmann::json& j = c.json();
  SPPLAN_RETURN_IF_ERROR(check_priced_experts(c));
  // DeepSeek's multi-head latent attention: K and V come from a low-rank latent, not n_kv heads.
  if (c.present("kv_lora_rank")) {
    return c.refuse("kv_lora_rank", j["kv_lora_rank"], "is latent attention (MLA), which spplan cannot price",
                    "absent or null");
  }
  // Gemma-2 caps attention scores and logits with tanh: FlashAttention-2 needs its softcap build,
  // and the capped logits are one more s x V tensor; neither is counted.
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    if (c.present(key)) return c.refuse(key, j[key], "is logit soft-capping, which spplan cannot price", "absent or null");
  }
  // gpt-oss's clamped SwiGLU is read with its model (read_gpt_oss); under another model type it
  // would come without the sinks and biases that go with it.
  if (c.model_type() != "gpt_oss" && c.present("swiglu_limit")) {
    return c.refuse("swiglu_limit", j["swiglu_limit"], "is gpt-oss's clamped SwiGLU under another model_type",
                    "absent, or model_type \"gpt_oss\"");
  }
  // The MLP priced is gated (gate, up, down: SwiGLU). Gemma's gated GeLU (GeGLU) has the same
  // matrices and the same tensors alive, so it prices alike; a GeLU elsewhere may be ungated.
  const bool gated_gelu_family = c.model_type().rfind("gemma", 0) == 0;
  for (const char* key : {"hidden_act", "hidden_activation"}) {
    if (!c.present(key)) continue;
    const bool silu = j[key] == "silu" || j[key] == "swish";
    const bool gated_gelu = gated_gelu_family && j[key].is_string() && j[key].get<std::string>().rfind("gelu", 0) == 0;
    if (!silu && !gated_gelu) {
      return c.refuse(key, j[key], "is an MLP spplan cannot price", "\"silu\", or a gelu in a Gemma config");
    }
  }
  return check_priced_family(c, family);
}

// The experts of a mixture (ModelSpec::num_experts): Mixtral's num_local_experts, whose experts are
// intermediate_size wide, or Qwen3-MoE's num_experts (num_local_experts as transformers 5 saves it)
// with moe_intermediate_size. What the costmodel does not price is refused: dense layers between
// MoE ones (decoder_sparse_step other than 1, mlp_only_layers), the router's input noise
// (router_jitter_noise). output_router_logits, the load-balancing loss's input, is read
// (memory_phases.cpp prices what it keeps).
Status read_moe(const ConfigKeys& c, ModelSpec* m) {
  const nlohmann::json& j = c.json();
  const char* experts_key = c.present("num_local_experts") ? "num_local_experts" : "num_experts";
  if (!c.present(experts_key)) return Status::ok();
  if (c.present("num_local_experts") && c.present("num_experts")) {
    return c.say("num_experts", "given beside num_local_experts", "one of them");
  }
  if (j[experts_key] == 0) return Status::ok();  // no experts: the dense MLP
  SPPLAN_RETURN_IF_ERROR(c.whole(experts_key, -1, kMaxExperts, &m->num_experts));
  if (!m->is_moe()) return Status::ok();  // one expert is a dense MLP
  SPPLAN_RETURN_IF_ERROR(c.whole("num_experts_per_tok", -1, kMaxExperts, &m->experts_per_token));
  // Mixtral's experts are intermediate_size wide and its router always divides by the top-k's sum.
  // transformers 5 saves Qwen3-MoE's count as num_local_experts too (with moe_intermediate_size),
  // so the key alone does not say Mixtral.
  const std::string type = c.model_type();
  const bool mixtral = type == "mixtral" || (type != "qwen3_moe" && std::string(experts_key) == "num_local_experts");
  SPPLAN_RETURN_IF_ERROR(
      c.whole("moe_intermediate_size", mixtral ? m->intermediate_size : -1, kMaxDim, &m->moe_intermediate_size));
  if (c.present("decoder_sparse_step") && j["decoder_sparse_step"] != 1) {
    return c.bad_value("decoder_sparse_step", j["decoder_sparse_step"],
                       "1: every layer a mixture; dense layers between them are not priced yet");
  }
  if (c.present("mlp_only_layers") && !(j["mlp_only_layers"].is_array() && j["mlp_only_layers"].empty())) {
    return c.bad_value("mlp_only_layers", j["mlp_only_layers"],
                       "[]: every layer a mixture; dense layers between them are not priced yet");
  }
  SPPLAN_RETURN_IF_ERROR(c.flag("output_router_logits", &m->output_router_logits));
  // Qwen3MoeConfig reads norm_topk_prob (default false); MixtralTopKRouter always divides by the sum.
  m->norm_topk_prob = mixtral;
  if (!mixtral) SPPLAN_RETURN_IF_ERROR(c.flag("norm_topk_prob", &m->norm_topk_prob));
  SPPLAN_RETURN_IF_ERROR(c.number("router_aux_loss_coef", 0.0, kMaxNumber, &m->router_aux_loss_coef));
  if (c.present("router_jitter_noise") && !(j["router_jitter_noise"].is_number() && j["router_jitter_noise"] == 0)) {
    return c.bad_value("router_jitter_noise", j["router_jitter_noise"],
                       "0: the router's noisy copy of its input is not priced");
  }
  return Status::ok();
}

// gpt-oss (transformers 5.24 modeling_gpt_oss.py): a sink logit per head (GptOssAttention.sinks),
// q/k/v/o biases (attention_bias, true by GptOssConfig's default: the o_proj's h a layer is not
// counted), every expert's SwiGLU clamped at swiglu_limit (GptOssExperts._apply_gate; the family's
// default 7.0), biases on the router and the experts, and the router's softmax over its top k
// logits (GptOssTopKRouter). The MXFP4 weights of the Hub's checkpoints train dequantized to bf16
// (Mxfp4Config(dequantize=True), OpenAI's fine-tuning cookbook): priced as bf16 parameters.
Status read_gpt_oss(const ConfigKeys& c, ModelSpec* m) {
  if (!m->is_moe()) {
    return c.bad_value("num_local_experts", c.json().value("num_local_experts", nlohmann::json()), "2 or more");
  }
  m->attention_sinks = true;
  m->expert_biases = true;
  m->router_softmax_after_topk = true;
  return c.number("swiglu_limit", kMinPositive, kMaxNumber, &m->swiglu_limit);
}

// GLM-4.5 and GLM-4.5-Air (transformers 5.24 modeling_glm4_moe.py, Glm4MoeConfig; docs/research/
// issue42-moe.md 1.4, 2.1): n_routed_experts experts of moe_intermediate_size, num_experts_per_tok
// of them a token; n_shared_experts more as one shared SwiGLU every token runs through; the first
// first_k_dense_replace layers dense (intermediate_size); a sigmoid router in fp32 that picks by
// score plus e_score_correction_bias (n_group and topk_group limit which experts it may pick, not
// what a step costs), divides by the top k's sum when norm_topk_prob and scales by
// routed_scaling_factor; no load-balancing loss (Glm4MoeForCausalLM computes none: the router
// logits it returns are not kept); partial_rotary_factor of each head rotated; use_qk_norm (GLM-4.5,
// not Air). The multi-token-prediction layers (num_nextn_predict_layers) are not built by
// transformers, so not trained or priced.
Status read_glm_moe(const ConfigKeys& c, const ModelFamily& family, ModelSpec* m) {
  SPPLAN_RETURN_IF_ERROR(c.whole("n_routed_experts", -1, kMaxExperts, &m->num_experts));
  if (!m->is_moe()) return c.bad_value("n_routed_experts", c.json()["n_routed_experts"], "2 or more");
  SPPLAN_RETURN_IF_ERROR(c.whole("num_experts_per_tok", -1, kMaxExperts, &m->experts_per_token));
  SPPLAN_RETURN_IF_ERROR(c.whole("moe_intermediate_size", -1, kMaxDim, &m->moe_intermediate_size));
  int64_t shared = 0;  // absent or null: Glm4MoeConfig's 1, from the family's defaults
  SPPLAN_RETURN_IF_ERROR(c.count("n_shared_experts", 0, kMaxExperts, &shared));
  m->shared_expert_intermediate_size = shared * m->moe_intermediate_size;
  SPPLAN_RETURN_IF_ERROR(c.count("first_k_dense_replace", 0, kMaxLayers, &m->first_dense_layers));
  m->router_sigmoid = family.router_sigmoid;
  SPPLAN_RETURN_IF_ERROR(c.whole("n_group", 1, kMaxExperts, &m->router_groups));
  SPPLAN_RETURN_IF_ERROR(c.whole("topk_group", 1, kMaxExperts, &m->router_topk_groups));
  SPPLAN_RETURN_IF_ERROR(c.number("routed_scaling_factor", kMinPositive, kMaxNumber, &m->routed_scaling_factor));
  m->norm_topk_prob = true;
  SPPLAN_RETURN_IF_ERROR(c.flag("norm_topk_prob", &m->norm_topk_prob));
  return c.flag("use_qk_norm", &m->qk_norm);
}

// A sliding window attends to fewer keys than the causal attention priced and run; it changes
// nothing while the sequence fits inside it, which check_plan (plan_rules.hpp) checks against seq.
// The Qwen2 family's config classes keep a window only with use_sliding_window (sliding_window if
// use_sliding_window else None), false by their default; a window absent (after the family's
// default: MistralConfig's 4096) or null is none.
Status read_sliding_window(const ConfigKeys& c, ModelSpec* m) {
  const nlohmann::json& j = c.json();
  bool use_window = true;
  SPPLAN_RETURN_IF_ERROR(c.flag("use_sliding_window", &use_window));
  if (!use_window) return Status::ok();
  // Qwen2-style configs window only the layers from max_window_layers on (transformers Qwen2Config's
  // layer_types: "sliding_attention" when i >= max_window_layers): none past the last layer, all
  // from 0, the first ones full between.
  if (c.present("max_window_layers")) {
    const nlohmann::json& first = j["max_window_layers"];
    if (!first.is_number_unsigned()) return c.bad_value("max_window_layers", first, "a whole number from 0");
    if (first.get<uint64_t>() >= static_cast<uint64_t>(m->num_hidden_layers)) return Status::ok();  // no windowed layer
    SPPLAN_RETURN_IF_ERROR(c.whole("sliding_window", 0, kMaxDim, &m->sliding_window));
    if (m->sliding_window > 0) m->full_attention_layers = static_cast<int64_t>(first.get<uint64_t>());
    return Status::ok();
  }
  return c.whole("sliding_window", 0, kMaxDim, &m->sliding_window);
}

// Which layers attend over the window: transformers' layer_types ("sliding_attention" or
// "full_attention", one a layer: Gemma 3, gpt-oss, Qwen2 saved by transformers 5), or Gemma 3's
// older sliding_window_pattern p (every p-th layer full: Gemma3TextConfig's layer_types rule), or,
// with neither, the rule the family's config class builds layer_types by (ModelFamily::
// full_attention_every: Gemma 3's pattern 6, Gemma 2's and gpt-oss's alternation). A window
// without any of them: every layer (Mistral). Layer types without a window are one line.
Status read_layer_types(const ConfigKeys& c, const ModelFamily* family, ModelSpec* m) {
  const bool has_types = c.present("layer_types");
  const bool has_pattern = c.present("sliding_window_pattern");
  const int64_t family_every = family != nullptr ? family->full_attention_every : 0;
  if (!has_types && !has_pattern && family_every == 0) return Status::ok();
  const char* key = has_types ? "layer_types" : "sliding_window_pattern";
  int64_t full = 0;
  if (has_types) {
    const nlohmann::json& types = c.json()["layer_types"];
    if (!types.is_array() || static_cast<int64_t>(types.size()) != m->num_hidden_layers) {
      return c.bad_value(key, types,
                         "a list of num_hidden_layers (" + std::to_string(m->num_hidden_layers) +
                             ") \"sliding_attention\" or \"full_attention\"");
    }
    for (const auto& type : types) {
      if (type != "full_attention" && type != "sliding_attention") {
        return c.refuse("layer_types", type, "is an attention spplan cannot price",
                        "\"full_attention\", \"sliding_attention\"");
      }
      full += type == "full_attention" ? 1 : 0;
    }
  } else {
    int64_t pattern = family_every;
    if (has_pattern) SPPLAN_RETURN_IF_ERROR(c.whole(key, -1, kMaxLayers, &pattern));
    full = m->num_hidden_layers / pattern;  // the i with (i + 1) % pattern == 0
  }
  if (full == m->num_hidden_layers) {
    m->sliding_window = 0;  // no layer reads the window
    return Status::ok();
  }
  if (m->sliding_window == 0) {
    // The family's rule over a config without a window (its sliding_window null): nothing windowed.
    if (!has_types && !has_pattern) return Status::ok();
    // Windowed layers without a window: layer types naming any, or a pattern leaving full layers among them.
    if (has_types || full > 0) {
      return c.bad_value(key, c.json()[key],
                         has_types ? "\"full_attention\" only, or a sliding_window for its \"sliding_attention\" layers"
                                   : "absent, or a sliding_window for the layers it windows");
    }
  }
  m->full_attention_layers = full;
  return Status::ok();
}

// The model's name: model_name.hpp's rule, from the top level (a multimodal config's text_config
// holds its own, often empty, _name_or_path).
Result<std::string> model_name(const ConfigKeys& top) {
  std::string name, name_or_path;
  SPPLAN_RETURN_IF_ERROR(top.text("name", &name));
  SPPLAN_RETURN_IF_ERROR(top.text("_name_or_path", &name_or_path));
  return config_model_name(top.path(), name, name_or_path);
}

// The family a decoder's keys are read as: its model_type's record, or, where it names none, the
// text class of the multimodal family around it (`text_class`: Gemma3Config reads its text_config
// as a Gemma3TextConfig). A multimodal family named as a decoder's type reads as its text class.
// nullptr: no model_type, or one without a record.
const ModelFamily* decoder_family(const ConfigKeys& given, const std::string& text_class) {
  const ModelFamily* family = find_family(given.present("model_type") ? given.model_type() : text_class);
  if (family != nullptr && !family->text_model_type.empty()) family = find_family(family->text_model_type);
  return family;
}

// The language model's keys, with the family's defaults where they are absent, and its parts.
Status read_decoder_keys(const ConfigKeys& c, const ModelFamily* family, ModelSpec* m) {
  SPPLAN_RETURN_IF_ERROR(check_priceable(c, family));
  const std::string type = c.model_type();
  SPPLAN_RETURN_IF_ERROR(c.whole("num_hidden_layers", -1, kMaxLayers, &m->num_hidden_layers));
  SPPLAN_RETURN_IF_ERROR(c.whole("hidden_size", -1, kMaxDim, &m->hidden_size));
  SPPLAN_RETURN_IF_ERROR(c.whole("num_attention_heads", -1, kMaxHeads, &m->num_attention_heads));
  SPPLAN_RETURN_IF_ERROR(c.whole("num_key_value_heads", m->num_attention_heads, kMaxHeads, &m->num_key_value_heads));
  SPPLAN_RETURN_IF_ERROR(c.whole("head_dim", m->hidden_size / m->num_attention_heads, kMaxHeads, &m->head_dim));
  SPPLAN_RETURN_IF_ERROR(c.whole("intermediate_size", -1, kMaxDim, &m->intermediate_size));
  SPPLAN_RETURN_IF_ERROR(c.whole("vocab_size", -1, kMaxDim, &m->vocab_size));
  SPPLAN_RETURN_IF_ERROR(c.flag("tie_word_embeddings", &m->tie_word_embeddings));
  m->qk_norm = family != nullptr && family->qk_norm;
  m->sandwich_norms = family != nullptr && family->sandwich_norms;
  m->attention_bias = family != nullptr && family->qkv_bias;
  // The bias key where the family's attention reads it (LlamaAttention: bias=config.attention_bias),
  // or a file without a family states it; Qwen2's attention is biased whatever the key says.
  if (family == nullptr || (!family->qkv_bias && family->defaults.contains("attention_bias"))) {
    SPPLAN_RETURN_IF_ERROR(c.flag("attention_bias", &m->attention_bias));
  }
  SPPLAN_RETURN_IF_ERROR(read_sliding_window(c, m));
  SPPLAN_RETURN_IF_ERROR(read_layer_types(c, family, m));
  SPPLAN_RETURN_IF_ERROR(type == "glm4_moe" ? read_glm_moe(c, *family, m) : read_moe(c, m));
  if (family != nullptr && family->gpt_oss_parts) SPPLAN_RETURN_IF_ERROR(read_gpt_oss(c, m));
  SPPLAN_RETURN_IF_ERROR(read_rope_config(c, m));
  return c.number("rms_norm_eps", kMinPositive, kMaxNumber, &m->rms_norm_eps);
}

// The language model: `object` (the top level, or a multimodal config's text_config, whose keys
// messages name "text_config.KEY") read as its family's config class reads it.
Status read_decoder(const std::string& path, const nlohmann::json& object, const std::string& prefix,
                    const std::string& text_class, ModelSpec* m) {
  const ConfigKeys given(path, object, prefix);
  const ModelFamily* family = decoder_family(given, text_class);
  if (family == nullptr) return read_decoder_keys(given, nullptr, m);
  nlohmann::json filled = with_family_defaults(object, *family);
  if (!given.present("model_type")) filled["model_type"] = family->model_type;  // the class it is read as
  return read_decoder_keys(ConfigKeys(path, filled, prefix), family, m);
}

}  // namespace

Result<ModelSpec> model_from_config_json(const std::string& path) {
  SPPLAN_ASSIGN_OR_RETURN(const nlohmann::json j, read_json_object(path));
  const ConfigKeys top(path, j);
  ModelSpec m;
  SPPLAN_ASSIGN_OR_RETURN(m.name, model_name(top));
  // Multimodal configs nest the language model (text_config): plan it, with the encoders beside it
  // counted where their modeling was read (read_multimodal_encoders, once the text width is read).
  // A multimodal family's config without one plans its class's default text model (Gemma3Config).
  const ModelFamily* top_family = find_family(top.model_type());
  const std::string text_class = top_family != nullptr ? top_family->text_model_type : "";
  const bool nested = top.present("text_config") && j["text_config"].is_object();
  const bool multimodal = nested || !text_class.empty();
  static const nlohmann::json kNoKeys = nlohmann::json::object();
  const nlohmann::json& decoder = !multimodal ? j : nested ? j["text_config"] : kNoKeys;
  SPPLAN_RETURN_IF_ERROR(read_decoder(path, decoder, multimodal ? "text_config." : "", text_class, &m));
  if (multimodal) SPPLAN_RETURN_IF_ERROR(read_multimodal_encoders(top, &m));
  m.causal_lm_class = causal_lm_class(top.model_type(), multimodal);
  SPPLAN_RETURN_IF_ERROR(check_model(m, path));
  return m;
}

}  // namespace spplan
