// StepGraphBuilder: adding ops, and the ZeRO-3 parameter uses with their prefetched gathers.
#include "simulator/step_graph_builder.hpp"

#include <algorithm>

namespace spplan::sim::detail {

StepGraphBuilder::StepGraphBuilder(const costmodel::StepCosts& costs, const MemoryTerms& terms,
                                   std::vector<int64_t> micro_steps, OpGraph* graph)
    // The costmodel counts a recompute (and its gather) when the recompute pass has compute time.
    : c_(costs), t_(terms), has_recompute_(costs.recompute.compute_s() > 0), micro_steps_(std::move(micro_steps)),
      g_(*graph) {}

OpId StepGraphBuilder::add(std::string name, Resource resource, OpCategory category, double duration_s) {
  Op op;
  op.name = std::move(name);
  op.resource = resource;
  op.category = category;
  op.duration_s = duration_s;
  return g_.add_op(std::move(op));
}

OpId StepGraphBuilder::add_compute(std::string name, OpCategory category, double duration_s) {
  const OpId id = add(std::move(name), Resource::kCompute, category, duration_s);
  g_.add_dep(prev_compute_, id);  // one stream: kernels run in issue order
  prev_compute_ = id;
  return id;
}

OpId StepGraphBuilder::add_optional(std::string name, Resource resource, OpCategory category, double duration_s) {
  if (duration_s <= 0) return kNoOp;  // the feature is off in this plan
  return add(std::move(name), resource, category, duration_s);
}

void StepGraphBuilder::alloc_at_start(OpId id, MemCategory category, double bytes) {
  if (id != kNoOp && bytes != 0) g_.mutable_op(id).at_start.push_back({category, bytes});
}

void StepGraphBuilder::free_at_end(OpId id, MemCategory category, double bytes) {
  if (id != kNoOp && bytes != 0) g_.mutable_op(id).at_end.push_back({category, -bytes});
}

void StepGraphBuilder::alloc_at_end(OpId id, MemCategory category, double bytes) {
  if (id != kNoOp && bytes != 0) g_.mutable_op(id).at_end.push_back({category, bytes});
}

// The order in which one step uses gathered parameters; gathers follow it one use ahead.
void StepGraphBuilder::plan_uses() {
  const auto layer_use = [&](const std::string& name, int layer) {
    return ParamUse{name, c_.param_gather_s, c_.param_fetch_h2d_s, t_.layer(layer).gathered};
  };
  const auto embed_use = [&](const std::string& name) {
    return ParamUse{name, c_.embed_gather_s, 0.0, t_.embedding_gathered_bytes};
  };
  for (const int64_t m : micro_steps_) {
    const std::string mp = micro_prefix(static_cast<int>(m));
    uses_.push_back(embed_use(mp + "embed.fwd"));
    for (int i = 0; i < c_.layers; ++i) uses_.push_back(layer_use(mp + "fwd.L" + std::to_string(i), i));
    uses_.push_back(embed_use(mp + "head"));
    uses_.back().is_turn = true;
    for (int i = static_cast<int>(c_.layers) - 1; i >= 0; --i) {
      if (has_recompute_) uses_.push_back(layer_use(mp + "rec.L" + std::to_string(i), i));
      uses_.push_back(layer_use(mp + "bwd.L" + std::to_string(i), i));
    }
    uses_.push_back(embed_use(mp + "embed.bwd"));
  }
}

// The gather of use `k` may start once use k-2 has ended, so at most two uses hold gathered
// parameters: the one running and the one being prefetched (as DeepSpeed's prefetch does).
// It allocates the prefetch window at its start; the rest arrives when the use begins.
void StepGraphBuilder::issue_gather(size_t k) {
  if (k >= uses_.size()) return;
  ParamUse& use = uses_[k];
  const OpId may_start_after = k >= 2 ? uses_[k - 2].last : kNoOp;
  use.fetch = add_optional("fetch." + use.name, Resource::kH2D, OpCategory::kOffload, use.fetch_s);
  g_.add_dep(may_start_after, use.fetch);
  use.gather = add_optional("gather." + use.name, Resource::kComm, OpCategory::kZero, use.gather_s);
  g_.add_dep(may_start_after, use.gather);
  g_.add_dep(use.fetch, use.gather);
  alloc_at_start(use.gather, MemCategory::kParams, std::min(t_.prefetch_window_bytes, use.bytes));
}

// Called just before the first op of the current use: issues the next use's gather (prefetch).
void StepGraphBuilder::begin_use() {
  if (!uses_[current_use_].is_turn) issue_gather(current_use_ + 1);
}

void StepGraphBuilder::attach_first(OpId first) {
  ParamUse& use = uses_[current_use_];
  g_.add_dep(use.fetch, first);
  g_.add_dep(use.gather, first);
  const double prefetched = use.gather != kNoOp ? std::min(t_.prefetch_window_bytes, use.bytes) : 0.0;
  alloc_at_start(first, MemCategory::kParams, use.bytes - prefetched);
}

// At the forward/backward turn the next use's gather is issued after the loss (so the loss holds
// no prefetch window, as in memory_phases()), though it may still run during the loss.
void StepGraphBuilder::end_use(OpId last) {
  ParamUse& use = uses_[current_use_];
  use.last = last;
  free_at_end(last, MemCategory::kParams, use.bytes);
  if (use.is_turn) issue_gather(current_use_ + 1);
  ++current_use_;
}

}  // namespace spplan::sim::detail
