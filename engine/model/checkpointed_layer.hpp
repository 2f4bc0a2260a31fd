// Activation checkpointing of one decoder layer (act_ckpt full or offload): the autograd function
// the model wraps each layer in.
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

namespace spplan::engine {

// A layer's forward from its input (its parameters and RoPE tables bound inside): its output, and
// a mixture's router logits when the load-balancing loss needs them (model.hpp).
using LayerFn = std::function<std::vector<at::Tensor>(const at::Tensor&)>;

// Activation checkpointing (BUILD-NOTES section 4): forward keeps only the layer input; backward
// recomputes the layer (all-to-alls included, in the same order on every rank) and differentiates
// it. Parameters come in as a TensorList so autograd routes their gradients (gotcha G4).
// act_ckpt offload: the kept input is a host copy, brought back right before the recompute.
// Returns (*fn)(x), every output differentiable; `params` are the tensors the layer's gradients flow to. REQUIRES: *fn outlives
// the backward of the result (the model keeps its closures until the next forward).
std::vector<at::Tensor> checkpoint_layer(const LayerFn* fn, bool offload, const at::Tensor& x, const std::vector<at::Tensor>& params);

}  // namespace spplan::engine
