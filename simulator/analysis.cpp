#include "simulator/analysis.hpp"

#include <algorithm>

namespace spplan::sim {
namespace {

// Work the step is made of (kernels, Adam); the all-to-alls occupy the compute stream but are
// communication the step waits for.
bool is_productive(const Op& op) {
  return op.category == OpCategory::kCompute || op.category == OpCategory::kOptimizer;
}

// Which category an interval is charged to, given what runs in it (-1: nothing is exposed).
int exposed_category(int productive_running, const std::array<int, kNumOpCategories>& running) {
  if (productive_running > 0) return -1;
  for (OpCategory c : {OpCategory::kA2a, OpCategory::kRing, OpCategory::kZero, OpCategory::kOffload}) {
    if (running[static_cast<int>(c)] > 0) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace

double critical_path_s(const OpGraph& graph) {
  std::vector<double> finish_s(graph.size(), 0.0);  // longest chain ending with each op
  double longest_s = 0;
  for (OpId id : graph.topological_order()) {
    finish_s[id] += graph.op(id).duration_s;
    longest_s = std::max(longest_s, finish_s[id]);
    for (OpId next : graph.successors(id)) finish_s[next] = std::max(finish_s[next], finish_s[id]);
  }
  return longest_s;
}

std::array<double, kNumResources> resource_busy_s(const OpGraph& graph) {
  std::array<double, kNumResources> busy_s{};
  for (const Op& op : graph.ops()) busy_s[static_cast<int>(op.resource)] += op.duration_s;
  return busy_s;
}

std::array<double, kNumOpCategories> category_total_s(const OpGraph& graph) {
  std::array<double, kNumOpCategories> total_s{};
  for (const Op& op : graph.ops()) total_s[static_cast<int>(op.category)] += op.duration_s;
  return total_s;
}

std::array<double, kNumOpCategories> exposed_s(const OpGraph& graph, const Schedule& schedule) {
  std::array<double, kNumOpCategories> exposed{};
  std::array<int, kNumOpCategories> running{};
  int productive_running = 0;
  const auto& log = schedule.log;
  for (size_t k = 0; k < log.size(); ++k) {  // log times never decrease
    const Op& op = graph.op(log[k].op);
    const int step = log[k].is_end ? -1 : 1;
    running[static_cast<int>(op.category)] += step;
    if (is_productive(op)) productive_running += step;
    if (k + 1 == log.size() || log[k + 1].time_s == log[k].time_s) continue;
    const int charged = exposed_category(productive_running, running);
    if (charged >= 0) exposed[charged] += log[k + 1].time_s - log[k].time_s;
  }
  return exposed;
}

}  // namespace spplan::sim
