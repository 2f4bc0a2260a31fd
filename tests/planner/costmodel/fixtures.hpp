// Plans the costmodel tests share: Llama-3.1-8B on H100s with the default knobs.
#pragma once

#include "planner/config/loaders.hpp"

namespace spplan::costmodel::testing {

inline PlanSpec llama8b(int64_t gpus, int64_t sp, int64_t seq) {
  PlanSpec p;
  p.model = load_model("llama-3.1-8b").value();
  p.cluster.gpu = load_gpu("h100-80gb").value();
  p.cluster.num_gpus = gpus;
  p.seq_len = seq;
  p.knobs.sp = sp;
  return p;
}

// Qwen3-30B-A3B's architecture (its config.json, docs/research/issue42-moe.md 1.1): 128 experts of
// width 768, 8 per token, on 48 layers.
inline ModelSpec qwen3_30b_a3b() {
  ModelSpec m;
  m.name = "qwen3-30b-a3b";
  m.num_hidden_layers = 48;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_key_value_heads = 4;
  m.head_dim = 128;
  m.intermediate_size = 6144;
  m.vocab_size = 151936;
  m.qk_norm = true;
  m.num_experts = 128;
  m.experts_per_token = 8;
  m.moe_intermediate_size = 768;
  return m;
}

}  // namespace spplan::costmodel::testing
