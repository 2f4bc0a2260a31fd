// The decoder's parameters as declared: which tensors, in which order and ZeRO unit, their shapes
// and how they start. Model (model.hpp) lays its flat buffers out from these.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/parallel/zero.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan::engine {

// One parameter: its shape and how it starts (norms: ones; biases: zeros; matrices: normal(0, 0.02)).
struct ParamDecl {
  Shape shape;
  bool is_norm = false;
  bool is_bias = false;
  // transformers' buffer, not trained (GLM-4.5's e_score_correction_bias): starts at 0, gets no
  // gradient, and never decays, not even under --weight-decay-all, so AdamW leaves it unchanged.
  bool is_buffer = false;
};

// The parameters in declaration order, grouped in ZeRO units (zero.hpp): the embedding; each layer
// (attn_norm, wqkv, [bqkv], [q_norm, k_norm], wo, mlp_norm, then w_gate_up, w_down, or a
// mixture layer's router, [router_bias], experts_gate_up, experts_down, [shared_gate_up,
// shared_down]: GLM-4.5's dense first layers have the dense pair); the final norm and the
// untied head. Unpadded, this order is the flat layout at ZeRO 0 and the checkpoint format.
std::vector<std::vector<ParamDecl>> param_units(const ModelSpec& spec);

// The shapes of `units`, unit by unit (ZeroLayout's input).
std::vector<std::vector<Shape>> shapes_of(const std::vector<std::vector<ParamDecl>>& units);

// Weight decay as the Hugging Face Trainer and ArcticTraining group the parameters: the matrices
// and the embedding decay; biases and norm weights do not (transformers 5.24 trainer.py
// get_decay_parameter_names: names with "bias" or a norm; ArcticTraining optimizer/adam_factory.py
// get_optimizer_grouped_params: "bias", "norm.weight", ...). `all`: every parameter decays
// (--weight-decay-all).
struct DecaySpan {
  int64_t begin = 0;   // within this rank's chunk of the unit (ZeroLayout::chunk_of, shard_part)
  int64_t length = 0;
  bool decay = true;
};
// Per unit, its owned chunk cut into spans by decay, in order; the padding past a unit's last
// parameter does not decay (it is 0 and its gradient is 0 either way).
std::vector<std::vector<DecaySpan>> decay_spans(const std::vector<std::vector<ParamDecl>>& units,
                                                const ZeroLayout& layout, bool all);

// Fills `full` (ZeroLayout's full layout) in declaration order from one generator; padding is 0.
// Values come from the CPU generator in fp32 on every device and dtype, so a GPU or bf16 run
// starts from the same weights (rounded to bf16).
void init_params(at::Tensor& full, const ZeroLayout& layout, const std::vector<std::vector<ParamDecl>>& decls,
                 uint64_t seed);

}  // namespace spplan::engine
