#include "simulator/simulate.hpp"

#include <algorithm>
#include <numeric>

#include "planner/core/parse.hpp"
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

// The numbers of a schedule that add up over micro steps, and so fold.
struct StepTotals {
  double step_s = 0, serial_s = 0, critical_s = 0;
  std::array<double, kNumResources> busy_s{};
  ExposedComm exposed;
};

StepTotals totals_of(const OpGraph& graph, const Schedule& schedule) {
  StepTotals t;
  t.step_s = schedule.makespan_s;
  for (const Op& op : graph.ops()) t.serial_s += op.duration_s;  // program order, as serial_s() adds
  t.critical_s = critical_path_s(graph);
  t.busy_s = resource_busy_s(graph);
  const auto exposed = exposed_s(graph, schedule);
  t.exposed = {exposed[static_cast<int>(OpCategory::kA2a)], exposed[static_cast<int>(OpCategory::kZero)],
               exposed[static_cast<int>(OpCategory::kOffload)], exposed[static_cast<int>(OpCategory::kRing)]};
  return t;
}

void set_totals(const StepTotals& t, SimResult* r) {
  r->step_time_s = t.step_s;
  r->serial_step_time_s = t.serial_s;
  r->critical_path_s = t.critical_s;
  r->resource_busy_s = t.busy_s;
  r->exposed_comm_s = t.exposed;
}

// `with` (first, steady, last) plus `n` times what the steady micro step adds over `without`
// (first and last alone). Adding a micro step never shortens the step: a rounding below 0 is 0.
double folded(double with, double without, int64_t n) {
  return with + static_cast<double>(n) * std::max(0.0, with - without);
}

StepTotals folded(const StepTotals& with, const StepTotals& without, int64_t n) {
  StepTotals t;
  t.step_s = folded(with.step_s, without.step_s, n);
  t.serial_s = folded(with.serial_s, without.serial_s, n);
  t.critical_s = folded(with.critical_s, without.critical_s, n);
  for (int k = 0; k < kNumResources; ++k) t.busy_s[k] = folded(with.busy_s[k], without.busy_s[k], n);
  t.exposed = {folded(with.exposed.a2a_s, without.exposed.a2a_s, n), folded(with.exposed.zero_s, without.exposed.zero_s, n),
               folded(with.exposed.offload_s, without.exposed.offload_s, n),
               folded(with.exposed.ring_s, without.exposed.ring_s, n)};
  return t;
}

// The micro steps drawn of a folded step: the first, one steady one and the last.
std::vector<int64_t> drawn_micro_steps(int64_t micro_steps) { return {0, 1, micro_steps - 1}; }

}  // namespace

std::string folded_text(const FoldedMicroSteps& f) {
  if (f.count <= 0) return "";
  const std::string range = f.count == 1 ? "micro step m" + std::to_string(f.first) + " (1 of " + count_text(f.of) + ") is"
                                         : "micro steps m" + std::to_string(f.first) + "..m" + std::to_string(f.last) +
                                               " (" + count_text(static_cast<double>(f.count)) + " of " +
                                               count_text(static_cast<double>(f.of)) + ") are";
  return range + " the same as m" + std::to_string(f.same_as) + ": simulated once, its " + duration_text(f.each_s) +
         " counted " + count_text(static_cast<double>(f.count)) + " more " + (f.count == 1 ? "time" : "times");
}

SimResult simulate_graph(const OpGraph& graph, Mode mode) {
  const Schedule schedule = schedule_ops(graph, mode);
  SimResult r;
  r.num_ops = graph.size();
  set_totals(totals_of(graph, schedule), &r);
  r.shown_time_s = schedule.makespan_s;
  MemoryTimeline timeline = memory_timeline(graph, schedule);
  r.peak_memory_bytes = timeline.peak_bytes;
  r.peak_time_s = timeline.peak_time_s;
  r.peak_op = timeline.peak_op == kNoOp ? "" : graph.op(timeline.peak_op).name;
  r.peak_alive = breakdown(timeline.peak_alive, r.peak_op);
  r.memory = std::move(timeline.samples);
  r.events = timed_events(graph, schedule);
  return r;
}

// A long accumulation: the memory peak and the events are the drawn micro steps' (the folded ones
// repeat the steady one's), the totals those of the whole step.
SimResult simulate(const costmodel::StepCosts& costs, const MemoryTerms& terms, Mode mode) {
  const int64_t m = costs.micro_steps;
  if (m <= kMaxSimulatedMicroSteps) return simulate_graph(build_step_graph(costs, terms), mode);
  const OpGraph drawn = build_step_graph(costs, terms, drawn_micro_steps(m));
  const OpGraph ends = build_step_graph(costs, terms, {0, m - 1});
  SimResult r = simulate_graph(drawn, mode);
  const StepTotals with{r.step_time_s, r.serial_step_time_s, r.critical_path_s, r.resource_busy_s, r.exposed_comm_s};
  const StepTotals without = totals_of(ends, schedule_ops(ends, mode));
  const int64_t n = m - kMaxSimulatedMicroSteps;
  set_totals(folded(with, without, n), &r);
  r.folded = {n, 2, m - 2, 1, m, std::max(0.0, with.step_s - without.step_s)};
  return r;
}

SimResult simulate_plan(const PlanSpec& plan, Mode mode) {
  const PlanSpec p = costmodel::as_priced(plan);  // a host CPU's share, as the estimate prices it
  return simulate(costmodel::step_costs(p), memory_terms(p), mode);
}

double simulated_step_time_s(const PlanSpec& plan) {
  const PlanSpec p = costmodel::as_priced(plan);
  const costmodel::StepCosts costs = costmodel::step_costs(p);
  const MemoryTerms terms = memory_terms(p);
  const auto makespan_s = [&](const OpGraph& graph) { return schedule_ops(graph, Mode::kOverlap).makespan_s; };
  const int64_t m = costs.micro_steps;
  if (m <= kMaxSimulatedMicroSteps) return makespan_s(build_step_graph(costs, terms));
  return folded(makespan_s(build_step_graph(costs, terms, drawn_micro_steps(m))),
                makespan_s(build_step_graph(costs, terms, {0, m - 1})), m - kMaxSimulatedMicroSteps);
}

}  // namespace spplan::sim
