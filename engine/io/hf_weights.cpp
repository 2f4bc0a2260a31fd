#include "engine/io/hf_weights.hpp"

#include "engine/io/hf_side_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "planner/config/config_keys.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/config/rope_scaling.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kSingleFile = "model.safetensors";

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string in_quotes(const std::string& name) {
  std::string q(1, '"');
  q += name;
  q += '"';
  return q;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

Status bad_key(const std::string& path, const std::string& key, const nlohmann::json& v, const std::string& allowed) {
  return Status::invalid(path + ": key " + in_quotes(key) + ": value " + short_dump(v) + " is not implemented in the engine (allowed: " +
                         allowed + ")");
}

// The files holding the tensors: the index's shards, or the one model.safetensors.
Result<std::vector<std::string>> weight_files(const std::string& dir) {
  const std::string index = dir + "/" + kIndexFile;
  if (look_at(index).kind == PathKind::kFile) {
    const nlohmann::json j = read_json(index);
    if (j.is_discarded() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
      return Status::invalid(index + ": not valid JSON with a \"weight_map\" object (allowed: an index written by "
                             "save_pretrained)");
    }
    std::set<std::string> files;
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos) {
        return Status::invalid(index + ": tensor " + in_quotes(name) + ": file " + short_dump(file) +
                               " (allowed: a file name in the same folder)");
      }
      files.insert(dir + "/" + file.get<std::string>());
    }
    return std::vector<std::string>(files.begin(), files.end());
  }
  if (look_at(dir + "/" + kSingleFile).kind == PathKind::kFile) return std::vector<std::string>{dir + "/" + kSingleFile};
  return Status::invalid(dir + ": no " + kSingleFile + " or " + kIndexFile +
                         " (allowed: a Hugging Face model folder saved with safetensors)");
}

// A mixture's tensors under the names the Hub's checkpoints have and transformers 5 still saves
// (its conversion_mapping stacks them into Qwen3MoeExperts' 3-D parameters on load and splits them
// again on save): Qwen3-MoE's mlp.gate and mlp.experts.E.{gate,up,down}_proj, Mixtral's
// block_sparse_moe.gate and block_sparse_moe.experts.E.{w1,w3,w2}. In the engine's order: the
// router [E, h], each expert's gate then up rows ([i, h] each: the engine's [E, 2 i, h]), each
// expert's down [h, i].
// GLM-4.5's mlp.gate.e_score_correction_bias follows the router, and its
// mlp.shared_experts.{gate,up,down}_proj the experts (the engine's shared gate|up, then down).
template <class Add>
void add_experts(const ModelSpec& spec, const std::string& layer, Add& add) {
  const int64_t h = spec.hidden_size, i = spec.moe_intermediate_size, is = spec.shared_expert_intermediate_size;
  const bool mixtral = hf_moe_is_mixtral(spec);
  const std::string block = layer + (mixtral ? "block_sparse_moe." : "mlp.");
  add(block + "gate.weight", {spec.num_experts, h});
  if (spec.router_sigmoid) add(block + "gate.e_score_correction_bias", {spec.num_experts});
  for (int64_t e = 0; e < spec.num_experts; ++e) {
    const std::string expert = block + "experts." + std::to_string(e) + ".";
    add(expert + (mixtral ? "w1.weight" : "gate_proj.weight"), {i, h});
    add(expert + (mixtral ? "w3.weight" : "up_proj.weight"), {i, h});
  }
  for (int64_t e = 0; e < spec.num_experts; ++e) {
    add(block + "experts." + std::to_string(e) + (mixtral ? ".w2.weight" : ".down_proj.weight"), {h, i});
  }
  if (is > 0) {
    add(block + "shared_experts.gate_proj.weight", {is, h});
    add(block + "shared_experts.up_proj.weight", {is, h});
    add(block + "shared_experts.down_proj.weight", {h, is});
  }
}

}  // namespace

std::string hf_model_type(const ModelSpec& spec) {
  if (spec.is_moe() && spec.glm_mixture()) return "glm4_moe";
  if (spec.is_moe()) return spec.qk_norm ? "qwen3_moe" : "mixtral";
  return spec.qk_norm ? "qwen3" : spec.attention_bias ? "qwen2" : "llama";
}

bool hf_moe_is_mixtral(const ModelSpec& spec) { return hf_model_type(spec) == "mixtral"; }

int64_t HfTensorPlace::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The order of model/parameters.cpp's param_units(): the two must agree, and HfWeights::open checks the
// total against nothing else, so the equivalence test with transformers is what pins it.
std::vector<HfTensorPlace> hf_tensor_places(const ModelSpec& spec) {
  const int64_t h = spec.hidden_size, d = spec.head_dim, i = spec.intermediate_size, V = spec.vocab_size;
  std::vector<HfTensorPlace> places;
  int64_t offset = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    places.push_back({name, std::move(shape), offset});
    offset += places.back().numel();
  };
  add("model.embed_tokens.weight", {V, h});
  for (int64_t l = 0; l < spec.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {h});
    add(p + "self_attn.q_proj.weight", {spec.q_dim(), h});
    add(p + "self_attn.k_proj.weight", {spec.kv_dim(), h});
    add(p + "self_attn.v_proj.weight", {spec.kv_dim(), h});
    if (spec.attention_bias) {  // the engine's bqkv: three contiguous ranges, as the weights
      add(p + "self_attn.q_proj.bias", {spec.q_dim()});
      add(p + "self_attn.k_proj.bias", {spec.kv_dim()});
      add(p + "self_attn.v_proj.bias", {spec.kv_dim()});
    }
    if (spec.qk_norm) {
      add(p + "self_attn.q_norm.weight", {d});
      add(p + "self_attn.k_norm.weight", {d});
    }
    add(p + "self_attn.o_proj.weight", {h, spec.q_dim()});
    add(p + "post_attention_layernorm.weight", {h});
    if (spec.is_moe() && l >= spec.first_dense_layers) {
      add_experts(spec, p, add);
    } else {
      add(p + "mlp.gate_proj.weight", {i, h});
      add(p + "mlp.up_proj.weight", {i, h});
      add(p + "mlp.down_proj.weight", {h, i});
    }
  }
  add("model.norm.weight", {h});
  if (!spec.tie_word_embeddings) add("lm_head.weight", {V, h});
  return places;
}

Result<ModelSpec> read_hf_config(const std::string& dir) {
  SPPLAN_RETURN_IF_ERROR(check_folder(dir, "--init-from: ", "a Hugging Face model folder"));
  const std::string path = dir + "/config.json";
  SPPLAN_ASSIGN_OR_RETURN(ModelSpec spec, load_model(path, "--init-from"));
  nlohmann::json j = read_json(path);  // load_model parsed it already: valid
  if (j.contains("text_config") && j["text_config"].is_object()) j = j["text_config"];
  const nlohmann::json type = j.value("model_type", nlohmann::json());
  // The families whose transformers modeling is the engine's decoder: Llama, Mistral (Llama's
  // layout), Qwen2 (q/k/v biases), Qwen3 (q/k norms), and the mixtures Qwen3-MoE (Qwen3's
  // attention) and Mixtral (Mistral's), and GLM-4.5 (its shared expert, dense first layers and
  // sigmoid router, partial RoPE, q/k/v biases).
  static const char* const kTypes[] = {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "glm4_moe"};
  if (std::none_of(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return type == t; })) {
    return bad_key(path, "model_type", type,
                   "\"llama\", \"mistral\", \"qwen2\", \"qwen3\", \"qwen3_moe\", \"mixtral\", \"glm4_moe\"");
  }
  if ((type == "qwen3_moe" || type == "mixtral") && !spec.is_moe()) {  // 0 or 1 expert: not the layer's tensors
    return bad_key(path, type == "mixtral" ? "num_local_experts" : "num_experts",
                   j.value(type == "mixtral" ? "num_local_experts" : "num_experts", nlohmann::json()), "2 or more");
  }
  if (j.contains("hidden_act") && j["hidden_act"] != "silu") return bad_key(path, "hidden_act", j["hidden_act"], "\"silu\"");
  // Llama's attention_bias puts a bias on o_proj too, which the engine has not (Qwen2's q/k/v
  // biases need no key: the loader sets attention_bias from the model type; GLM-4.5's key means
  // q, k and v only, Glm4MoeAttention).
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    const bool qkv_only = type == "glm4_moe" && std::string(key) == "attention_bias";
    if (!qkv_only && j.contains(key) && j[key] == true) return bad_key(path, key, j[key], "false");
  }
  return spec;
}

Status check_same_model(const ModelSpec& run, const std::string& run_source, const ModelSpec& hf,
                        const std::string& config_path) {
  auto differs = [&](const char* key, const std::string& hf_value, const std::string& run_value) {
    return Status::invalid(config_path + ": key " + in_quotes(key) + ": value " + hf_value + " disagrees with the run's model (" +
                           run_source + " has " + run_value + ") (allowed: the same model, or leave out --model)");
  };
  const std::pair<const char*, std::pair<int64_t, int64_t>> ints[] = {
      {"num_hidden_layers", {hf.num_hidden_layers, run.num_hidden_layers}},
      {"hidden_size", {hf.hidden_size, run.hidden_size}},
      {"num_attention_heads", {hf.num_attention_heads, run.num_attention_heads}},
      {"num_key_value_heads", {hf.num_key_value_heads, run.num_key_value_heads}},
      {"head_dim", {hf.head_dim, run.head_dim}},
      {"intermediate_size", {hf.intermediate_size, run.intermediate_size}},
      {"vocab_size", {hf.vocab_size, run.vocab_size}}};
  for (const auto& [key, v] : ints) {
    if (v.first != v.second) return differs(key, std::to_string(v.first), std::to_string(v.second));
  }
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (hf.tie_word_embeddings != run.tie_word_embeddings) {
    return differs("tie_word_embeddings", flag(hf.tie_word_embeddings), flag(run.tie_word_embeddings));
  }
  if (hf.qk_norm != run.qk_norm) {
    return differs("model_type", hf.qk_norm ? "qwen3 (q/k norms)" : "without q/k norms",
                   run.qk_norm ? "q/k norms" : "no q/k norms");
  }
  if (hf.rope_theta != run.rope_theta) return differs("rope_theta", format_number(hf.rope_theta), format_number(run.rope_theta));
  if (!(hf.rope_scaling == run.rope_scaling)) {
    return differs("rope_scaling", rope_text(hf.rope_scaling), rope_text(run.rope_scaling));
  }
  if (hf.rope_scaling.type == RopeType::kDynamic && hf.max_position_embeddings != run.max_position_embeddings) {
    return differs("max_position_embeddings", std::to_string(hf.max_position_embeddings),
                   std::to_string(run.max_position_embeddings));
  }
  if (hf.attention_bias != run.attention_bias) {
    return differs("model_type", hf.attention_bias ? "qwen2 (q/k/v biases)" : "without q/k/v biases",
                   run.attention_bias ? "q/k/v biases" : "no q/k/v biases");
  }
  const std::pair<const char*, std::pair<int64_t, int64_t>> experts[] = {
      {"num_experts", {hf.num_experts, run.num_experts}},
      {"num_experts_per_tok", {hf.experts_per_token, run.experts_per_token}},
      {"moe_intermediate_size", {hf.moe_intermediate_size, run.moe_intermediate_size}}};
  for (const auto& [key, v] : experts) {
    if (v.first != v.second) return differs(key, std::to_string(v.first), std::to_string(v.second));
  }
  if (hf.is_moe() && hf.norm_topk_prob != run.norm_topk_prob) {
    return differs("norm_topk_prob", flag(hf.norm_topk_prob), flag(run.norm_topk_prob));
  }
  if (hf.is_moe() && hf.output_router_logits != run.output_router_logits) {
    return differs("output_router_logits", flag(hf.output_router_logits), flag(run.output_router_logits));
  }
  if (hf.is_moe() && hf.output_router_logits && hf.router_aux_loss_coef != run.router_aux_loss_coef) {
    return differs("router_aux_loss_coef", format_number(hf.router_aux_loss_coef), format_number(run.router_aux_loss_coef));
  }
  const std::pair<const char*, std::pair<int64_t, int64_t>> glm[] = {
      {"n_shared_experts x moe_intermediate_size", {hf.shared_expert_intermediate_size, run.shared_expert_intermediate_size}},
      {"first_k_dense_replace", {hf.first_dense_layers, run.first_dense_layers}},
      {"n_group", {hf.router_groups, run.router_groups}},
      {"topk_group", {hf.router_topk_groups, run.router_topk_groups}}};
  for (const auto& [key, v] : glm) {
    if (hf.is_moe() && v.first != v.second) return differs(key, std::to_string(v.first), std::to_string(v.second));
  }
  if (hf.is_moe() && hf.router_sigmoid != run.router_sigmoid) {
    return differs("model_type", hf.router_sigmoid ? "glm4_moe (a sigmoid router)" : "a softmax router",
                   run.router_sigmoid ? "a sigmoid router" : "a softmax router");
  }
  if (hf.is_moe() && hf.routed_scaling_factor != run.routed_scaling_factor) {
    return differs("routed_scaling_factor", format_number(hf.routed_scaling_factor), format_number(run.routed_scaling_factor));
  }
  if (hf.partial_rotary_factor != run.partial_rotary_factor) {
    return differs("partial_rotary_factor", format_number(hf.partial_rotary_factor), format_number(run.partial_rotary_factor));
  }
  if (hf.rms_norm_eps != run.rms_norm_eps) {
    return differs("rms_norm_eps", format_number(hf.rms_norm_eps), format_number(run.rms_norm_eps));
  }
  return Status::ok();
}

Result<HfWeights> HfWeights::open(const std::string& dir, const ModelSpec& spec) {
  HfWeights w;
  SPPLAN_ASSIGN_OR_RETURN(const std::vector<std::string> paths, weight_files(dir));
  for (const std::string& path : paths) {
    SPPLAN_ASSIGN_OR_RETURN(SafetensorsFile f, SafetensorsFile::open(path));
    w.files_.push_back(std::move(f));
  }
  w.places_ = hf_tensor_places(spec);
  std::map<std::string, size_t> wanted;
  for (size_t p = 0; p < w.places_.size(); ++p) wanted[w.places_[p].name] = p;
  w.views_.assign(w.places_.size(), nullptr);
  std::vector<std::string> found_in(w.places_.size());
  for (const SafetensorsFile& f : w.files_) {
    for (const StTensorView& t : f.tensors()) {
      const std::string where = f.path() + ": tensor " + in_quotes(t.name);
      const auto it = wanted.find(t.name);
      if (it == wanted.end()) {
        if (t.name == "lm_head.weight" && spec.tie_word_embeddings) continue;  // tied: the embedding is the head
        return Status::invalid(where + ": not a parameter of the model in config.json (allowed: the " +
                               std::to_string(w.places_.size()) + " tensors of a " + hf_model_type(spec) +
                               " model with these sizes)");
      }
      const HfTensorPlace& place = w.places_[it->second];
      if (w.views_[it->second] != nullptr) return Status::invalid(where + ": also in " + found_in[it->second] + " (allowed: once)");
      if (t.shape != place.shape) {
        return Status::invalid(where + ": shape " + shape_text(t.shape) + ", expected " + shape_text(place.shape) +
                               " (from config.json)");
      }
      if (!convertible_dtype(t.dtype)) {
        return Status::invalid(where + ": dtype " + t.dtype + " (allowed: F32, BF16, F16)");
      }
      w.views_[it->second] = &t;
      found_in[it->second] = f.path();
    }
  }
  for (size_t p = 0; p < w.places_.size(); ++p) {
    if (w.views_[p] == nullptr) {
      return Status::invalid(dir + ": tensor " + in_quotes(w.places_[p].name) + ": missing (expected shape " +
                             shape_text(w.places_[p].shape) + ", from config.json)");
    }
  }
  w.num_params_ = w.places_.back().offset + w.places_.back().numel();
  return w;
}

void HfWeights::read(int64_t first, int64_t count, float* out) const {
  const int64_t last = first + count;
  for (size_t p = 0; p < places_.size(); ++p) {
    const int64_t begin = std::max(first, places_[p].offset);
    const int64_t end = std::min(last, places_[p].offset + places_[p].numel());
    if (begin < end) convert_to_f32(*views_[p], begin - places_[p].offset, end - begin, out + (begin - first));
  }
}

namespace {

// A config.json transformers builds the same model from: the architecture keys, the RoPE scaling,
// the explicit defaults the engine assumes (silu, no o_proj or MLP biases) and float32 weights.
nlohmann::json config_from_spec(const ModelSpec& spec, int64_t seq_len) {
  const bool moe = spec.is_moe();
  const std::string type = hf_model_type(spec);
  static const std::map<std::string, const char*> kArchitecture = {
      {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"},
      {"qwen3_moe", "Qwen3MoeForCausalLM"}, {"mixtral", "MixtralForCausalLM"}, {"glm4_moe", "Glm4MoeForCausalLM"}};
  const char* architecture = kArchitecture.at(type);
  const int64_t context = spec.max_position_embeddings > 0 ? spec.max_position_embeddings : std::max<int64_t>(seq_len, 2048);
  nlohmann::json j{{"architectures", {architecture}},
                   {"model_type", type},
                   {"num_hidden_layers", spec.num_hidden_layers},
                   {"hidden_size", spec.hidden_size},
                   {"num_attention_heads", spec.num_attention_heads},
                   {"num_key_value_heads", spec.num_key_value_heads},
                   {"head_dim", spec.head_dim},
                   // Mixtral's experts are intermediate_size wide: its config has no moe_intermediate_size
                   {"intermediate_size", hf_moe_is_mixtral(spec) ? spec.moe_intermediate_size : spec.intermediate_size},
                   {"vocab_size", spec.vocab_size},
                   {"tie_word_embeddings", spec.tie_word_embeddings},
                   {"rope_theta", spec.rope_theta},
                   {"rms_norm_eps", spec.rms_norm_eps},
                   {"max_position_embeddings", context},
                   {"hidden_act", "silu"},
                   {"rope_scaling", rope_scaling_json(spec.rope_scaling)}};
  if (type == "glm4_moe") {  // Glm4MoeConfig's keys; it has no load-balancing loss
    j["n_routed_experts"] = spec.num_experts;
    j["num_experts_per_tok"] = spec.experts_per_token;
    j["moe_intermediate_size"] = spec.moe_intermediate_size;
    j["n_shared_experts"] = spec.shared_expert_intermediate_size / spec.moe_intermediate_size;
    j["first_k_dense_replace"] = spec.first_dense_layers;
    j["norm_topk_prob"] = spec.norm_topk_prob;
    j["n_group"] = spec.router_groups;
    j["topk_group"] = spec.router_topk_groups;
    j["routed_scaling_factor"] = spec.routed_scaling_factor;
    j["partial_rotary_factor"] = spec.partial_rotary_factor;
    j["use_qk_norm"] = spec.qk_norm;
    j["attention_bias"] = spec.attention_bias;
    return j;
  }
  if (moe) {
    const bool mixtral = hf_moe_is_mixtral(spec);
    j[mixtral ? "num_local_experts" : "num_experts"] = spec.num_experts;
    j["num_experts_per_tok"] = spec.experts_per_token;
    if (!mixtral) {
      j["moe_intermediate_size"] = spec.moe_intermediate_size;
      j["norm_topk_prob"] = spec.norm_topk_prob;
      j["decoder_sparse_step"] = 1;
      j["mlp_only_layers"] = nlohmann::json::array();
    }
    j["output_router_logits"] = spec.output_router_logits;
    j["router_aux_loss_coef"] = spec.router_aux_loss_coef;
  }
  if (!spec.attention_bias) j["attention_bias"] = false;
  if (spec.attention_bias || spec.qk_norm) j["use_sliding_window"] = false;
  return j;
}

}  // namespace

Status write_hf_folder(const std::string& dir, const ModelSpec& spec, int64_t seq_len, const std::string& original_config,
                       const float* params, int64_t num_params, const ExportOptions& options) {
  const std::vector<HfTensorPlace> places = hf_tensor_places(spec);
  if (places.back().offset + places.back().numel() != num_params) {
    return Status::internal("--export-hf: " + std::to_string(num_params) + " parameters, the HF names cover " +
                            std::to_string(places.back().offset + places.back().numel()));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (look_at(dir).kind != PathKind::kDirectory) {
    return Status::io_error("--export-hf: " + dir + ": cannot create folder (" + ec.message() + ")");
  }
  std::vector<StTensorOut> tensors;
  for (const HfTensorPlace& p : places) tensors.push_back({p.name, p.shape, params + p.offset});
  SPPLAN_RETURN_IF_ERROR(write_safetensors(dir + "/" + kSingleFile, tensors, {{"format", "pt"}}, options.bf16));
  // A stale index from an earlier sharded save would make transformers look for its shards.
  fs::remove(dir + "/" + kIndexFile, ec);
  SPPLAN_ASSIGN_OR_RETURN(const std::string config, exported_config(original_config, config_from_spec(spec, seq_len), options.bf16,
                                                                   options.max_position_embeddings));
  return write_file_atomically(dir + "/config.json", config);
}

}  // namespace spplan::engine
