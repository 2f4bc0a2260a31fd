// simulate(): one training step of a plan, scheduled on a representative rank's resources.
//
// The result holds the step time with overlap (or without, Mode::kNoOverlap), the serial time
// (sum of every op: equals costmodel's StepCosts::serial_s()), the communication the step waits
// for, the device-memory peak (when, during which op, and what is alive by category) and the list
// of timed events (ops of zero duration are left out).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/step_costs.hpp"
#include "simulator/memory_terms.hpp"
#include "simulator/memory_timeline.hpp"
#include "simulator/op_graph.hpp"
#include "simulator/scheduler.hpp"

namespace spplan::sim {

struct SimEvent {
  std::string name;
  Resource resource = Resource::kCompute;
  OpCategory category = OpCategory::kCompute;
  double start_s = 0;
  double end_s = 0;
};

struct ExposedComm {  // seconds the step waits for each kind of communication
  double a2a_s = 0;
  double zero_s = 0;
  double offload_s = 0;
  double ring_s = 0;  // ring-attention hops that outlast their block, all-gathers
};

// A long gradient accumulation, folded. Its micro steps are the same but for the first (nothing
// before it to overlap with) and the last (the one that reduces at ZeRO 0/1, before the optimizer):
// above kMaxSimulatedMicroSteps, simulate() schedules the first, one steady micro step (m1) and the
// last, and counts the steady one's time `count` more times in every total of SimResult (step,
// serial, critical path, busy and exposed times). `events` and `memory` hold the micro steps
// simulated, so a trace and a picture stay the size of three micro steps whatever the accumulation.
inline constexpr int64_t kMaxSimulatedMicroSteps = 3;
struct FoldedMicroSteps {
  int64_t count = 0;      // micro steps not simulated (0: none folded)
  int64_t first = 0;      // the first and last of them, numbered from 0 as op names are ("m2")
  int64_t last = 0;
  int64_t same_as = 0;    // the micro step they repeat
  int64_t of = 0;         // micro steps in the step (grad_accum_steps)
  double each_s = 0;      // the step time each adds: the steady micro step's (with overlap, or serial)
};

// "micro steps m2..m999998 (999,997 of 1,000,000) are the same as m1: simulated once, its 0.52 s
// counted 999,997 more times"; "" when nothing is folded.
std::string folded_text(const FoldedMicroSteps& folded);

struct SimResult {
  double step_time_s = 0;          // makespan of the schedule (overlap or not, per the mode)
  double serial_step_time_s = 0;   // every op one after another
  double critical_path_s = 0;      // longest dependency chain: a lower bound with overlap
  std::array<double, kNumResources> resource_busy_s{};  // work per resource: each a lower bound
  ExposedComm exposed_comm_s;
  double peak_memory_bytes = 0;
  double peak_time_s = 0;
  std::string peak_op;             // the op whose start reached the peak ("" before any op)
  costmodel::MemoryBreakdown peak_alive;  // by category at the peak; peak_phase = peak_op
  std::vector<SimEvent> events;    // by start time, then program order
  std::vector<MemorySample> memory;  // total bytes over time (fragmentation included)
  size_t num_ops = 0;              // ops in the graph, zero-duration ones included
  FoldedMicroSteps folded;         // micro steps counted but not simulated
  double shown_time_s = 0;         // the span of `events` and `memory`: step_time_s unless folded
};

// Every micro step up to kMaxSimulatedMicroSteps, the rest folded (FoldedMicroSteps).
SimResult simulate(const costmodel::StepCosts& costs, const MemoryTerms& terms, Mode mode);
// The graph as built: nothing folded.
SimResult simulate_graph(const OpGraph& graph, Mode mode);

// REQUIRES: check_plan(plan) is ok.
SimResult simulate_plan(const PlanSpec& plan, Mode mode);

// The overlapped step time of a plan, for re-ranking plans (`spplan plan --simulate`).
// REQUIRES: check_plan(plan) is ok.
double simulated_step_time_s(const PlanSpec& plan);

}  // namespace spplan::sim
