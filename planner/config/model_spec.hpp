// ModelSpec: the architecture of a decoder-only Llama/Qwen/Mistral-style model, in the key names of
// a Hugging Face config.json. Architecture only: nothing about hardware or parallelism.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spplan {

// How RoPE's frequencies are scaled for contexts past pre-training, as transformers computes each
// for training (modeling_rope_utils.py: _compute_{linear_scaling,dynamic_ntk,yarn,llama3}_parameters).
// Read from config.json's "rope_scaling" (transformers 4) or "rope_parameters" (transformers 5).
enum class RopeType { kDefault, kLinear, kDynamic, kYarn, kLlama3 };
const std::vector<std::string>& rope_type_names();  // "default", "linear", "dynamic", "yarn", "llama3"
std::string to_string(RopeType type);

struct RopeScaling {
  RopeType type = RopeType::kDefault;
  double factor = 1.0;                            // linear, dynamic, yarn, llama3
  int64_t original_max_position_embeddings = 0;   // yarn, llama3: the pre-training context
  double low_freq_factor = 1.0;                   // llama3
  double high_freq_factor = 4.0;                  // llama3
  double beta_fast = 32.0, beta_slow = 1.0;       // yarn: the ramp's bounds (the paper's defaults)
  double attention_factor = 0.0;                  // yarn: cos/sin scale; 0: from factor (and mscale)
  double mscale = 0.0, mscale_all_dim = 0.0;      // yarn (DeepSeek's form of the attention factor)
  bool truncate = true;                           // yarn: round the correction range outward
  bool operator==(const RopeScaling&) const = default;
};

struct ModelSpec {
  std::string name;                 // for reports: a preset's or TOML's name key, else its stem; model_name.hpp
  int64_t num_hidden_layers = 0;    // L
  int64_t hidden_size = 0;          // h
  int64_t num_attention_heads = 0;  // nh (query heads)
  int64_t num_key_value_heads = 0;  // n_kv (GQA groups); equals nh for MHA
  int64_t head_dim = 0;             // d; defaults to h / nh when a config omits it
  int64_t intermediate_size = 0;    // i (SwiGLU MLP width)
  int64_t vocab_size = 0;           // V
  bool tie_word_embeddings = false; // lm_head shares the embedding matrix
  bool qk_norm = false;             // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  // Gemma 2 and 3: RMSNorm also on the attention's and the MLP's outputs before each residual add
  // (post_attention_layernorm, post_feedforward_layernorm): four a layer, where Llama has two.
  bool sandwich_norms = false;
  double rope_theta = 10000.0;      // RoPE base; only the engine uses it
  RopeScaling rope_scaling;         // RoPE scaling; only the engine uses it (the report names it)
  int64_t max_position_embeddings = 0;  // dynamic RoPE's reference length; 0: not given
  bool attention_bias = false;      // biases on q, k and v (Qwen2, Qwen2.5)
  int64_t sliding_window = 0;       // Mistral's window; 0: none. A plan's seq must fit inside it
  // With a window, the layers that keep full causal attention (layer_types' "full_attention": Gemma
  // 3's every sixth, gpt-oss's every other); 0: every layer windowed (Mistral).
  int64_t full_attention_layers = 0;
  double rms_norm_eps = 1e-6;       // RMSNorm epsilon; only the engine uses it
  // Mixture of experts (Qwen3-MoE, Mixtral): every layer's MLP is num_experts SwiGLU experts of
  // moe_intermediate_size, and a linear router (no bias) sends each token to experts_per_token of
  // them. 0 experts: the dense MLP of intermediate_size. config.json: num_experts (Qwen) or
  // num_local_experts (Mixtral, whose experts are intermediate_size wide), num_experts_per_tok,
  // moe_intermediate_size.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  // The router logits every mixture layer returns for the load-balancing loss (config.json
  // output_router_logits; transformers adds router_aux_loss_coef x that loss to the step's loss).
  bool output_router_logits = false;
  // How the router weighs a token's k experts: the top-k of the softmax over all E, divided by their
  // sum when norm_topk_prob (Qwen3-MoE reads the key, its class default false; Mixtral always
  // divides: MixtralTopKRouter). The load-balancing loss enters the loss times router_aux_loss_coef
  // (both configs' class default 0.001). Neither changes what a step costs; the engine computes with them.
  bool norm_topk_prob = true;
  double router_aux_loss_coef = 0.001;
  // gpt-oss (config.json model_type "gpt_oss"): a learned sink logit per head, which only some
  // attention kernels train (plan_rules.cpp check_attention_sinks); its experts' SwiGLU clamped at
  // swiglu_limit ((up + 1) * gate * sigmoid(1.702 gate), 0: the plain SwiGLU); biases on the
  // router and on every expert's gate|up and down (expert_biases); its router's softmax over the
  // top k logits only (router_softmax_after_topk: no softmax over all E experts is kept).
  bool attention_sinks = false;
  double swiglu_limit = 0.0;
  bool expert_biases = false;
  bool router_softmax_after_topk = false;
  // GLM-4.5 (config.json model_type "glm4_moe", transformers' Glm4MoeForCausalLM): its first
  // first_dense_layers layers (first_k_dense_replace) run the dense MLP of intermediate_size, the
  // rest the mixture; each mixture layer also runs a shared expert, one SwiGLU of
  // shared_expert_intermediate_size (n_shared_experts x moe_intermediate_size), on every token,
  // ungated (Glm4MoeMoE.forward); its router scores each expert with a sigmoid in fp32 and picks by
  // score plus a fixed correction bias (router_sigmoid: Glm4MoeTopkRouter), and it has no
  // load-balancing loss. Together they are its mixture (glm_mixture()).
  int64_t first_dense_layers = 0;
  int64_t shared_expert_intermediate_size = 0;
  bool router_sigmoid = false;
  // How the sigmoid router picks (Glm4MoeTopkRouter; the engine computes with them, nothing a step
  // costs changes): only among the topk_groups best of router_groups groups of experts (n_group,
  // topk_group; a group scored by its two best experts), and the chosen scores times
  // routed_scaling_factor.
  int64_t router_groups = 1;
  int64_t router_topk_groups = 1;
  double routed_scaling_factor = 1.0;
  // The share of each head's dimensions RoPE rotates (GLM-4.5's 0.5: Glm4MoeConfig
  // partial_rotary_factor); the rest pass through. 1: all of them.
  double partial_rotary_factor = 1.0;

  int64_t q_dim() const { return num_attention_heads * head_dim; }   // width of Q (and of attention output)
  // The dimensions of a head RoPE rotates: int(head_dim x partial_rotary_factor), as transformers'
  // rotary embeddings compute it (Glm4MoeRotaryEmbedding); head_dim for most models.
  int64_t rotary_dim() const { return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor); }
  int64_t kv_dim() const { return num_key_value_heads * head_dim; }  // width of K and of V
  // Key-value heads a rank holds after Ulysses' all-to-all over sp ranks: split, or replicated to one
  // head per rank when there are fewer than sp (MEMORY-FACTS 8.3).
  int64_t kv_heads_per_rank(int64_t sp) const { return (num_key_value_heads > sp ? num_key_value_heads : sp) / sp; }
  bool is_moe() const { return num_experts > 1; }
  // The layers that run the mixture (all but the dense first ones), and those that run the dense MLP.
  int64_t mixture_layers() const { return is_moe() ? num_hidden_layers - first_dense_layers : 0; }
  int64_t dense_layers() const { return num_hidden_layers - mixture_layers(); }
  // GLM-4.5's mixture: a shared expert, dense first layers or a sigmoid router, none of which the
  // Qwen3-MoE / Mixtral layer has (a trainer record can refuse it: RuleKey::kGlmMixture).
  bool glm_mixture() const { return shared_expert_intermediate_size > 0 || first_dense_layers > 0 || router_sigmoid; }
  // Layers that attend over the window (all of them without full_attention_layers; none without a window).
  int64_t windowed_layers() const { return sliding_window > 0 ? num_hidden_layers - full_attention_layers : 0; }
  // Whether some layer attends over a window shorter than a sequence of `seq` tokens (within the
  // window, windowed attention is causal attention).
  bool windows(int64_t seq) const { return windowed_layers() > 0 && seq > sliding_window; }
  // The SwiGLU width one token runs through in a mixture layer: its experts' together and the
  // shared expert's; in a dense model, the dense MLP's.
  int64_t routed_width() const {
    return is_moe() ? experts_per_token * moe_intermediate_size + shared_expert_intermediate_size : intermediate_size;
  }
  // A multimodal config's encoders beside its language model (text_config): the vision tower and
  // projector, in parameters, where their modeling was read (multimodal_encoders.hpp). A text step
  // never runs them, but trained (transformers' default) they hold weights, gradients and optimizer
  // state as the language model's do (costmodel ParamCounts::encoders).
  double encoder_params = 0;
  // An encoder beside it that is not counted (a tower whose modeling was not read, an audio
  // encoder): the report says so.
  bool encoders_left_out = false;
  // transformers' AutoModelForCausalLM builds the model (its config's model_type is in the causal-LM
  // mapping): every text family, Gemma 3's multimodal config; not Mistral 3's or LLaVA's, which
  // only AutoModelForImageTextToText builds, so a stack that loads through the causal-LM class
  // cannot start them (model_families.hpp causal_lm_class).
  bool causal_lm_class = true;
  // Encoders beside the language model, counted or not.
  bool has_encoders() const { return encoder_params > 0 || encoders_left_out; }
  bool operator==(const ModelSpec&) const = default;
};

}  // namespace spplan
