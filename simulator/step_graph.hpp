// build_step_graph(): the operation graph of one training step for one representative rank.
//
// Per micro step (grad_accum_steps of them, or those named: simulate.hpp folds the rest), in program order:
//   embedding forward; per layer forward: norm, qkv, a2a(seq->heads), attention, a2a(heads->seq),
//   out_proj, MLP (one op per tile), then the checkpoint's D2H copy when checkpoints are offloaded;
//   the loss forward and backward (one op per tile); per layer from the last: the checkpoint's H2D
//   copy (prefetched one layer ahead), the recompute (a forward pass), the backward pass (mirrored
//   order), then the layer's gradient reduction on the comm stream; the embedding backward and its
//   reduction. Then one optimizer phase: Adam on the GPU, or grad D2H, host Adam and param H2D;
//   then the ZeRO-1/2 parameter all-gather.
// Resources: the compute stream runs every kernel and the Ulysses all-to-alls (DeepSpeed issues
// them on the compute stream and waits: they are never hidden); the comm stream runs the ZeRO
// gathers and reductions; the copy engines the offload copies; the host CPU the offloaded Adam.
// ZeRO-3: each use of a layer's (or the embedding's) parameters is preceded by a gather that may
// start as soon as the use before the previous one has ended (one use ahead). A layer's backward
// waits for the reduction two layers above it (DeepSpeed blocks on the bucket), the optimizer for
// every reduction; an offloaded checkpoint is copied back one layer ahead of its recompute.
//
// Memory: a no-overlap schedule of this graph passes through the moments that
// costmodel::memory_phases() adds up, so the two peaks agree (tests/simulator checks it).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/costmodel/step_costs.hpp"
#include "simulator/memory_terms.hpp"
#include "simulator/op_graph.hpp"

namespace spplan::sim {

// Durations from `costs`, memory from `terms`. Ops whose feature is off (a gather, copy or
// reduction priced at 0 s) are left out; compute and all-to-all ops are always present.
OpGraph build_step_graph(const costmodel::StepCosts& costs, const MemoryTerms& terms);

// The same with only the micro steps `micro_steps` (indices into 0..costs.micro_steps-1, increasing),
// each as it is in the whole step (its name, whether it reduces), then the optimizer: what
// simulate() draws of a long accumulation (simulate.hpp, FoldedMicroSteps).
OpGraph build_step_graph(const costmodel::StepCosts& costs, const MemoryTerms& terms,
                         const std::vector<int64_t>& micro_steps);

}  // namespace spplan::sim
