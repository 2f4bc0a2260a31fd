#include "simulator/simulate.hpp"

#include <algorithm>
#include <numeric>

#include "planner/costmodel/host_cpu.hpp"
#include "simulator/analysis.hpp"
#include "simulator/step_graph.hpp"

namespace spplan::sim {
namespace {

costmodel::MemoryBreakdown breakdown(const MemBytes& bytes, const std::string& phase) {
  const auto at = [&](MemCategory c) { return bytes[static_cast<int>(c)]; };
  costmodel::MemoryBreakdown m;
  m.params_bytes = at(MemCategory::kParams);
  m.grads_bytes = at(MemCategory::kGrads);
  m.optimizer_bytes = at(MemCategory::kOptimizer);
  m.activations_bytes = at(MemCategory::kActivations);
  m.logits_bytes = at(MemCategory::kLogits);
  m.buffers_bytes = at(MemCategory::kBuffers);
  m.overhead_bytes = at(MemCategory::kOverhead);
  m.peak_phase = phase;
  return m;
}

std::vector<SimEvent> timed_events(const OpGraph& graph, const Schedule& schedule) {
  std::vector<OpId> ids;
  for (OpId id = 0; id < static_cast<OpId>(graph.size()); ++id) {
    if (graph.op(id).duration_s > 0) ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](OpId a, OpId b) { return schedule.start_s[a] < schedule.start_s[b]; });
  std::vector<SimEvent> events;
  events.reserve(ids.size());
  for (OpId id : ids) {
    const Op& op = graph.op(id);
    events.push_back({op.name, op.resource, op.category, schedule.start_s[id], schedule.end_s[id]});
  }
  return events;
}

}  // namespace

SimResult simulate_graph(const OpGraph& graph, Mode mode) {
  const Schedule schedule = schedule_ops(graph, mode);
  SimResult r;
  r.num_ops = graph.size();
  r.step_time_s = schedule.makespan_s;
  r.serial_step_time_s = 0;
  for (const Op& op : graph.ops()) r.serial_step_time_s += op.duration_s;  // program order, as serial_s() adds
  r.critical_path_s = critical_path_s(graph);
  r.resource_busy_s = resource_busy_s(graph);
  const auto exposed = exposed_s(graph, schedule);
  r.exposed_comm_s = {exposed[static_cast<int>(OpCategory::kA2a)], exposed[static_cast<int>(OpCategory::kZero)],
                      exposed[static_cast<int>(OpCategory::kOffload)], exposed[static_cast<int>(OpCategory::kRing)]};
  MemoryTimeline timeline = memory_timeline(graph, schedule);
  r.peak_memory_bytes = timeline.peak_bytes;
  r.peak_time_s = timeline.peak_time_s;
  r.peak_op = timeline.peak_op == kNoOp ? "" : graph.op(timeline.peak_op).name;
  r.peak_alive = breakdown(timeline.peak_alive, r.peak_op);
  r.memory = std::move(timeline.samples);
  r.events = timed_events(graph, schedule);
  return r;
}

SimResult simulate(const costmodel::StepCosts& costs, const MemoryTerms& terms, Mode mode) {
  return simulate_graph(build_step_graph(costs, terms), mode);
}

SimResult simulate_plan(const PlanSpec& plan, Mode mode) {
  const PlanSpec p = costmodel::as_priced(plan);  // a host CPU's share, as the estimate prices it
  return simulate(costmodel::step_costs(p), memory_terms(p), mode);
}

double simulated_step_time_s(const PlanSpec& plan) {
  const PlanSpec p = costmodel::as_priced(plan);
  const OpGraph graph = build_step_graph(costmodel::step_costs(p), memory_terms(p));
  return schedule_ops(graph, Mode::kOverlap).makespan_s;
}

}  // namespace spplan::sim
