// RoPE's inverse frequencies and cos/sin tables, for every RopeType of model_spec.hpp, op for op
// as transformers computes them for training (modeling_rope_utils.py, LlamaRotaryEmbedding): in
// float32, the tables scaled by the attention factor (YaRN's; 1 otherwise) before the cast to
// the activations' dtype.
#pragma once

#include <cstdint>
#include <utility>

#include <ATen/core/Tensor.h>

#include "planner/config/model_spec.hpp"

namespace spplan::engine {

struct RopeFrequencies {
  at::Tensor inv_freq;            // [d/2] float32
  double attention_factor = 1.0;  // multiplies cos and sin (YaRN)
};

// The frequencies of the spec.rotary_dim() rotated dimensions (the tables' d below).
// `seq_len`: the longest position + 1 the model sees (the run's sequence length). Only "dynamic"
// reads it: transformers' dynamic_rope_update rescales the base once positions pass
// max_position_embeddings, from max(position_ids) + 1 of the whole (unsharded) sequence.
RopeFrequencies rope_frequencies(const ModelSpec& spec, int64_t seq_len, c10::Device device);

// cos, sin of [1, n, 1, d/2] for positions [first, first + n), float32.
std::pair<at::Tensor, at::Tensor> rope_tables(const RopeFrequencies& f, int64_t first, int64_t n);
// cos, sin of [b, n, 1, d/2] for the positions [b, n] (int64; packed documents restart at 0).
std::pair<at::Tensor, at::Tensor> rope_tables_at(const RopeFrequencies& f, const at::Tensor& positions);

}  // namespace spplan::engine
