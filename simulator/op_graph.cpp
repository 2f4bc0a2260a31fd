#include "simulator/op_graph.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <numeric>

#include <boost/graph/topological_sort.hpp>

namespace spplan::sim {

const char* resource_name(Resource resource) {
  switch (resource) {
    case Resource::kCompute: return "compute";
    case Resource::kComm: return "comm";
    case Resource::kH2D: return "h2d";
    case Resource::kD2H: return "d2h";
    case Resource::kHost: return "host";
  }
  return "?";
}

const char* category_name(OpCategory category) {
  switch (category) {
    case OpCategory::kCompute: return "compute";
    case OpCategory::kA2a: return "a2a";
    case OpCategory::kZero: return "zero";
    case OpCategory::kOffload: return "offload";
    case OpCategory::kOptimizer: return "optimizer";
    case OpCategory::kRing: return "ring";
  }
  return "?";
}

const char* mem_category_name(MemCategory category) {
  static const char* const kNames[kNumMemCategories] = {"params",      "grads",  "optimizer", "activations",
                                                        "logits",      "buffers", "overhead"};
  return kNames[static_cast<int>(category)];
}

double total_bytes(const MemBytes& bytes) { return std::accumulate(bytes.begin(), bytes.end(), 0.0); }

OpId OpGraph::add_op(Op op) {
  ops_.push_back(std::move(op));
  const auto vertex = boost::add_vertex(graph_);
  return static_cast<OpId>(vertex);
}

void OpGraph::add_dep(OpId before, OpId after) {
  if (before == kNoOp || after == kNoOp) return;
  assert(before < after && "dependencies must follow program order");
  boost::add_edge(static_cast<size_t>(before), static_cast<size_t>(after), graph_);
}

std::vector<OpId> OpGraph::successors(OpId id) const {
  std::vector<OpId> out;
  for (auto [it, end] = boost::adjacent_vertices(static_cast<size_t>(id), graph_); it != end; ++it) {
    out.push_back(static_cast<OpId>(*it));
  }
  return out;
}

std::vector<int> OpGraph::in_degrees() const {
  std::vector<int> degree(size(), 0);
  for (size_t v = 0; v < size(); ++v) {
    for (auto [it, end] = boost::adjacent_vertices(v, graph_); it != end; ++it) ++degree[*it];
  }
  return degree;
}

std::vector<OpId> OpGraph::topological_order() const {
  std::vector<size_t> reversed;
  boost::topological_sort(graph_, std::back_inserter(reversed));
  std::vector<OpId> order(reversed.rbegin(), reversed.rend());
  return order;
}

}  // namespace spplan::sim
