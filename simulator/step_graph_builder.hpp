// Internal: the state of one build_step_graph() call, split over step_graph_*.cpp by phase.
#pragma once

#include <string>
#include <vector>

#include "simulator/step_graph.hpp"

namespace spplan::sim::detail {

// One use of a group of gathered parameters (ZeRO-3): a layer's forward, recompute or backward,
// the embedding forward / backward, or the head (loss forward + backward).
struct ParamUse {
  std::string name;
  double gather_s = 0;
  double fetch_s = 0;       // offloaded params: host->device before the gather
  double bytes = 0;         // gathered bytes the use holds
  bool is_turn = false;     // the loss: the next use's gather is issued after it, not before
  OpId fetch = kNoOp, gather = kNoOp, last = kNoOp;
};

struct PassOps {
  OpId first = kNoOp, last = kNoOp;
  OpId a2a_first = kNoOp, a2a_second = kNoOp;  // the pass's two all-to-alls, in pass order
  OpId attention_first = kNoOp, attention_last = kNoOp;  // ring attention: its first and last op
};

class StepGraphBuilder {
 public:
  // Builds into *graph (an out-parameter: Boost's adjacency_list copies when it is moved) the
  // micro steps `micro_steps` (indices into 0..costs.micro_steps-1, increasing), then the optimizer.
  StepGraphBuilder(const costmodel::StepCosts& costs, const MemoryTerms& terms, std::vector<int64_t> micro_steps,
                   OpGraph* graph);
  void build();

 private:
  // Ops and memory (step_graph_uses.cpp).
  OpId add(std::string name, Resource resource, OpCategory category, double duration_s);
  OpId add_compute(std::string name, OpCategory category, double duration_s);  // chained on the stream
  OpId add_optional(std::string name, Resource resource, OpCategory category, double duration_s);
  void alloc_at_start(OpId id, MemCategory category, double bytes);
  void free_at_end(OpId id, MemCategory category, double bytes);
  void alloc_at_end(OpId id, MemCategory category, double bytes);

  // ZeRO-3 parameter uses (step_graph_uses.cpp).
  void plan_uses();
  void issue_gather(size_t use);
  void begin_use();
  void attach_first(OpId first);
  void end_use(OpId last);

  // Passes (step_graph_forward.cpp, step_graph_backward.cpp).
  // `layer`'s pass: its MLP op is "experts" where the layer is a mixture's (StepCosts::first_mixture_layer).
  PassOps emit_pass(const costmodel::LayerPassCosts& pass, bool backward, const std::string& prefix, int layer);
  // The exchange moment, the layer's saved tensors (`own`: its kind's terms), ring buffers.
  void hold_pass_activations(const PassOps& pass, const MemoryTerms::LayerBytes& own);
  // Attention, as one op or as ring attention's blocks and hops; sets the pass's attention ops.
  void emit_attention(const costmodel::LayerPassCosts& pass, const std::string& prefix, PassOps* ops);
  OpId emit_tiles(const std::string& prefix, double total_s, int64_t tiles, OpId* first);
  void emit_embedding_forward(int micro);
  void emit_forward_layer(int micro, int layer);
  void emit_loss(int micro);
  void emit_ckpt_h2d(int micro, int layer);
  void emit_backward_layer(int micro, int layer);
  void emit_embedding_backward(int micro);
  void emit_optimizer();

  std::string micro_prefix(int micro) const { return "m" + std::to_string(micro) + "."; }
  bool checkpoint_stays_on_device(int layer) const;
  OpId reduction_two_layers_above(int layer) const;

  const costmodel::StepCosts& c_;
  const MemoryTerms& t_;
  const bool has_recompute_;
  const std::vector<int64_t> micro_steps_;  // the micro steps drawn, by their index in the step
  OpGraph& g_;
  OpId prev_compute_ = kNoOp;     // the last op issued on the compute stream
  std::vector<ParamUse> uses_;
  size_t current_use_ = 0;
  std::vector<OpId> ckpt_d2h_;    // per layer (this micro step)
  std::vector<OpId> ckpt_h2d_;    // per layer (this micro step)
  std::vector<OpId> layer_reduce_; // per layer: its gradient reduction (this micro step)
  std::vector<OpId> reductions_;  // every gradient reduction of the step
};

}  // namespace spplan::sim::detail
