// OpGraph: the operations of one training step for one representative rank, as a DAG.
//
// Each operation runs on one resource for a duration the costmodel priced, and allocates / frees
// memory when it starts and ends. Operations are numbered in program order (the order the
// training loop issues them); every dependency points forward in that order, so program order is
// a topological order and a no-overlap run simply plays the operations one after another.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "planner/costmodel/memory.hpp"

namespace spplan::sim {

// Where an operation runs. Each resource runs one operation at a time.
enum class Resource { kCompute, kComm, kH2D, kD2H, kHost };
inline constexpr int kNumResources = 5;
const char* resource_name(Resource resource);  // "compute", "comm", "h2d", "d2h", "host"

// What an operation's time counts as (the estimate's TimeBreakdown categories).
// kRing: ring attention's K/V traffic (hops on the comm stream, the all-gather variant in line).
enum class OpCategory { kCompute, kA2a, kZero, kOffload, kOptimizer, kRing };
inline constexpr int kNumOpCategories = 6;
const char* category_name(OpCategory category);  // "compute", "a2a", "zero", "offload", "optimizer", "ring"

// The costmodel's memory categories (MemoryBreakdown fields, in that order).
enum class MemCategory { kParams, kGrads, kOptimizer, kActivations, kLogits, kBuffers, kOverhead };
inline constexpr int kNumMemCategories = 7;
const char* mem_category_name(MemCategory category);  // "params", "grads", ...
using MemBytes = std::array<double, kNumMemCategories>;  // bytes by MemCategory
double total_bytes(const MemBytes& bytes);

// A change of device memory: positive allocates, negative frees.
struct MemDelta {
  MemCategory category = MemCategory::kActivations;
  double bytes = 0;
};

using OpId = int32_t;
inline constexpr OpId kNoOp = -1;

struct Op {
  std::string name;                 // e.g. "m0.fwd.L3.qkv"
  Resource resource = Resource::kCompute;
  OpCategory category = OpCategory::kCompute;
  double duration_s = 0;
  std::vector<MemDelta> at_start;   // applied when the op starts
  std::vector<MemDelta> at_end;     // applied when the op ends
};

class OpGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

  // Appends an op; its id is its position in program order.
  OpId add_op(Op op);
  // `after` cannot start before `before` ends. Ignores kNoOp on either side, so builders can pass
  // "the op that may not exist". REQUIRES: before < after (dependencies follow program order).
  void add_dep(OpId before, OpId after);

  size_t size() const { return ops_.size(); }
  const Op& op(OpId id) const { return ops_[static_cast<size_t>(id)]; }
  Op& mutable_op(OpId id) { return ops_[static_cast<size_t>(id)]; }
  const std::vector<Op>& ops() const { return ops_; }
  const Graph& graph() const { return graph_; }
  std::vector<OpId> successors(OpId id) const;
  std::vector<int> in_degrees() const;
  // Boost's topological sort (reversed into first-to-last order).
  std::vector<OpId> topological_order() const;

  MemBytes initial_bytes{};  // alive before the first op: persistent model state, context
  costmodel::AllocatorSlack slack;  // reported overhead grows by slack.bytes(the other bytes)

 private:
  std::vector<Op> ops_;
  Graph graph_;
};

}  // namespace spplan::sim
