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

// Qwen3-30B-A3B (its preset: 128 experts of width 768, 8 per token, on 48 layers).
inline ModelSpec qwen3_30b_a3b() { return load_model("qwen3-30b-a3b").value(); }

}  // namespace spplan::costmodel::testing
