// How long one simulated step takes: Llama-3.1-70B (80 layers, hidden 8192, 64 heads, 8 KV heads,
// head_dim 128, intermediate 28672, vocab 128256) at 1M tokens on 1024 H100s (bundled presets), sp 8 or
// 16, ZeRO-3 with offloaded checkpoints and tiled MLP / loss (the largest graphs: ~5,800 ops at
// sp 8, where the MLP has 16 tiles). Run: spplan_simulator_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "planner/config/loaders.hpp"
#include "simulator/simulate.hpp"
#include "simulator/step_graph.hpp"

namespace {

// The bundled presets, as `spplan simulate --model llama-3.1-70b --gpu h100-80gb` reads them.
spplan::PlanSpec llama70b_plan(int64_t sp) {
  setenv("SPPLAN_CONFIG_DIR", SPPLAN_CONFIG_DIR_DEFAULT, 0);
  spplan::PlanSpec p;
  p.model = spplan::load_model("llama-3.1-70b").value();
  p.cluster.gpu = spplan::load_gpu("h100-80gb").value();
  p.cluster.num_gpus = 1024;
  p.seq_len = 1024 * 1024;
  p.knobs.sp = sp;
  p.knobs.act_ckpt = spplan::ActCkpt::kOffload;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  return p;
}

// Everything `spplan simulate` does: price, build the graph, schedule, memory timeline, events.
void BM_SimulatePlan(benchmark::State& state) {
  const spplan::PlanSpec plan = llama70b_plan(state.range(0));
  size_t ops = 0;
  for (auto _ : state) {
    const auto result = spplan::sim::simulate_plan(plan, spplan::sim::Mode::kOverlap);
    ops = result.num_ops;
    benchmark::DoNotOptimize(result.step_time_s);
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_SimulatePlan)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

// What `spplan plan --simulate` calls per candidate plan.
void BM_SimulatedStepTime(benchmark::State& state) {
  const spplan::PlanSpec plan = llama70b_plan(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(spplan::sim::simulated_step_time_s(plan));
}
BENCHMARK(BM_SimulatedStepTime)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

// Scheduling alone, on a graph built once.
void BM_ScheduleOnly(benchmark::State& state) {
  const spplan::PlanSpec plan = llama70b_plan(state.range(0));
  namespace sim = spplan::sim;
  const auto graph = sim::build_step_graph(spplan::costmodel::step_costs(plan), sim::memory_terms(plan));
  for (auto _ : state) benchmark::DoNotOptimize(sim::schedule_ops(graph, sim::Mode::kOverlap).makespan_s);
}
BENCHMARK(BM_ScheduleOnly)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
