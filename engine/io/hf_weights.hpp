// Hugging Face model folders in and out of the engine (--init-from DIR, --export-hf DIR).
//
// A folder is config.json plus model.safetensors, or shards listed by model.safetensors.index.json
// ("weight_map": tensor name -> file). The engine's parameters (model.hpp) map onto transformers'
// Llama / Qwen3 names; two engine parameters are stacks of HF tensors along rows:
//   embedding               model.embed_tokens.weight                       [V, h]
//   layer l attn_norm       model.layers.l.input_layernorm.weight           [h]
//           wqkv            self_attn.q_proj / k_proj / v_proj .weight      [nh d, h] ; [n_kv d, h] x 2
//           bqkv            self_attn.q_proj / k_proj / v_proj .bias (qwen2) [nh d] ; [n_kv d] x 2
//           q_norm, k_norm  self_attn.q_norm / k_norm .weight (qwen3)       [d]
//           wo              self_attn.o_proj.weight                         [h, nh d]
//           mlp_norm        post_attention_layernorm.weight                 [h]
//           w_gate_up       mlp.gate_proj / up_proj .weight                 [i, h] x 2
//           w_down          mlp.down_proj.weight                            [h, i]
//   (a mixture, instead of the three MLP tensors: the router, each expert's gate and up, each
//   expert's down, under Qwen3-MoE's or Mixtral's names: hf_weights.cpp add_experts)
//   final norm              model.norm.weight                               [h]
//   head (untied)           lm_head.weight                                  [V, h]
// Both use rotate-half RoPE on the same q/k row order, so no permutation is needed. Each HF tensor
// is thus one contiguous range of the engine's unpadded parameter vector (zero.hpp: the checkpoint
// order), which is how a ZeRO-3 rank reads only its own chunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/safetensors.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

// One HF tensor's place in the unpadded parameter vector, in the engine's declaration order.
struct HfTensorPlace {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset = 0;  // first element in the unpadded vector
  int64_t numel() const;
};

// A mixture without q/k norms is Mixtral (its tensors' names, config.json's keys); with them Qwen3-MoE.
bool hf_moe_is_mixtral(const ModelSpec& spec);
// The transformers family whose modeling builds `spec`'s decoder: q/k norms Qwen3, q/k/v biases
// Qwen2, else Llama; a mixture Qwen3-MoE or Mixtral (config.json's model_type of an export).
std::string hf_model_type(const ModelSpec& spec);

// Every HF tensor of `spec`'s model, in declaration order (no lm_head when tied). Their numels add
// up to the engine's parameter count.
std::vector<HfTensorPlace> hf_tensor_places(const ModelSpec& spec);

// DIR/config.json as a ModelSpec (planner's loader: RoPE scaling, Qwen2's biases, the sliding
// window), plus what the engine must refuse that the planner need not: a model_type other than
// llama, mistral, qwen2, qwen3, qwen3_moe or mixtral, hidden_act other than silu, o_proj or MLP biases. Errors name the
// file and key.
Result<ModelSpec> read_hf_config(const std::string& dir);

// The run's model (from `run_source`, e.g. "--model tiny-llama") is the one in `config_path`:
// every key the engine builds from agrees; else the first that differs, named.
Status check_same_model(const ModelSpec& run, const std::string& run_source, const ModelSpec& hf,
                        const std::string& config_path);

// The safetensors of a folder, checked against `spec`: every expected tensor present once with
// its shape and a dtype the engine converts (F32, BF16, F16), nothing else (an lm_head.weight
// beside tied embeddings is ignored, as transformers does). Errors name the file, the tensor, the
// shape found and the shape expected.
class HfWeights {
 public:
  static Result<HfWeights> open(const std::string& dir, const ModelSpec& spec);

  // Unpadded parameter elements [first, first + count) as fp32 into out[0, count); reads only the
  // bytes of that range.
  void read(int64_t first, int64_t count, float* out) const;
  int64_t num_params() const { return num_params_; }

 private:
  std::vector<SafetensorsFile> files_;
  std::vector<HfTensorPlace> places_;
  std::vector<const StTensorView*> views_;  // per place, into files_ (whose views never move)
  int64_t num_params_ = 0;
};

// How an export writes: the weights' dtype, and the context length config.json states.
struct ExportOptions {
  bool bf16 = false;                    // BF16 weights (else F32)
  int64_t max_position_embeddings = 0;  // > 0: raise config.json's to this (exported_config)
};

// Writes DIR/config.json and DIR/model.safetensors (HF names), each atomically, from the unpadded
// parameters. config.json is `original_config` (the carried file's text: hf_side_files.hpp) with
// only what `options` sets, or made from `spec` when it is ""; transformers'
// AutoModelForCausalLM loads the folder. A whole folder put in place at once: staged_folder.hpp.
Status write_hf_folder(const std::string& dir, const ModelSpec& spec, int64_t seq_len, const std::string& original_config,
                       const float* params, int64_t num_params, const ExportOptions& options = {});

}  // namespace spplan::engine
