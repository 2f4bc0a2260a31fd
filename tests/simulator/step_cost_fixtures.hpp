// StepCosts built by hand for the simulator's worked-by-hand tests (step graph, memory timeline).
#pragma once

#include "planner/costmodel/step_costs.hpp"

namespace spplan::sim::testing {

// Two layers, no checkpointing, no ZeRO-3, GPU Adam.
//   forward pass:  norm 1, qkv 2, a2a 1, attention 4, a2a 1, out_proj 1, mlp 2  = 12 (a2a 2)
//   backward pass: norm 2, qkv 4, a2a 1, attention 8, a2a 1, out_proj 2, mlp 4  = 22 (a2a 2)
//   embed fwd 1, embed bwd 1, loss fwd 3, loss bwd 5, reduce 6 per layer, embed reduce 2, Adam 3.
inline costmodel::StepCosts two_layer_costs() {
  costmodel::StepCosts c;
  c.layers = 2;
  c.forward = costmodel::LayerPassCosts{1, 2, 1, 4, 1, 1, 2, 1};
  c.backward = costmodel::LayerPassCosts{2, 4, 1, 8, 1, 2, 4, 1};
  c.embed_fwd_s = 1;
  c.embed_bwd_s = 1;
  c.loss_fwd_s = 3;
  c.loss_bwd_s = 5;
  c.grad_reduce_s = 6;
  c.embed_grad_reduce_s = 2;
  c.optimizer_s = 3;
  return c;
}

}  // namespace spplan::sim::testing
