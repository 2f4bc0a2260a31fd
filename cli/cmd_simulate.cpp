// `spplan simulate --plan FILE.toml [--trace out.json] [--svg out.svg] [--no-overlap] [--json]
//                  [--events N]`
// Simulates one training step of a plan and prints the step time, exposed communication and the
// memory peak (a short table, or one JSON object). --trace writes a Chrome trace (Perfetto),
// --svg a picture of the timeline. Exit 0 on success, 2 on bad input (one line on stderr).
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/command_table.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "planner/costmodel/estimate.hpp"
#include "simulator/simulate.hpp"
#include "simulator/svg_timeline.hpp"
#include "simulator/trace_json.hpp"

namespace {

using nlohmann::json;
using spplan::cli::fail;
constexpr size_t kDefaultListedEvents = 100;  // keeps --json output bounded for 80-layer models

json breakdown_gib(const spplan::costmodel::MemoryBreakdown& m) {
  using spplan::gib;
  return {{"params", gib(m.params_bytes)},           {"grads", gib(m.grads_bytes)},
          {"optimizer", gib(m.optimizer_bytes)},     {"activations", gib(m.activations_bytes)},
          {"logits", gib(m.logits_bytes)},           {"buffers", gib(m.buffers_bytes)},
          {"overhead", gib(m.overhead_bytes)}};
}

json events_json(const spplan::sim::SimResult& r, size_t listed) {
  json list = json::array();
  for (size_t k = 0; k < r.events.size() && k < listed; ++k) {
    const auto& e = r.events[k];
    list.push_back({{"name", e.name},
                    {"resource", spplan::sim::resource_name(e.resource)},
                    {"category", spplan::sim::category_name(e.category)},
                    {"start_s", e.start_s},
                    {"end_s", e.end_s}});
  }
  return {{"count", r.events.size()}, {"listed", list.size()}, {"first", std::move(list)}};
}

json result_json(const spplan::sim::SimResult& r, const spplan::costmodel::Estimate& e, bool overlap, size_t listed) {
  using spplan::gib;
  json busy;
  for (int k = 0; k < spplan::sim::kNumResources; ++k) {
    busy[spplan::sim::resource_name(static_cast<spplan::sim::Resource>(k))] = r.resource_busy_s[k];
  }
  return {{"mode", overlap ? "overlap" : "no-overlap"},
          {"step_time_s", r.step_time_s},
          {"serial_step_time_s", r.serial_step_time_s},
          {"critical_path_s", r.critical_path_s},
          {"exposed_comm_s", {{"a2a", r.exposed_comm_s.a2a_s}, {"zero", r.exposed_comm_s.zero_s},
                              {"offload", r.exposed_comm_s.offload_s}, {"ring", r.exposed_comm_s.ring_s}}},
          {"resource_busy_s", busy},
          {"peak_memory_gib", gib(r.peak_memory_bytes)},
          {"peak", {{"time_s", r.peak_time_s}, {"op", r.peak_op}, {"alive_gib", breakdown_gib(r.peak_alive)}}},
          {"estimate", {{"step_time_s", e.time.step_time_s}, {"peak_memory_gib", gib(e.memory.needed_bytes())},
                        {"peak_phase", e.memory.peak_phase}}},
          {"events", events_json(r, listed)},
          {"folded_micro_steps", {{"count", r.folded.count}, {"first", r.folded.first}, {"last", r.folded.last},
                                  {"same_as", r.folded.same_as}, {"each_s", r.folded.each_s},
                                  {"text", spplan::sim::folded_text(r.folded)}}}};
}

void print_table(const spplan::sim::SimResult& r, const spplan::costmodel::Estimate& e, bool overlap) {
  using spplan::gib;
  std::printf("simulated step (%s)            simulated   estimate\n", overlap ? "overlap" : "no overlap");
  std::printf("  step time (s)                  %10.4f %10.4f\n", r.step_time_s, e.time.step_time_s);
  std::printf("  serial step time (s)           %10.4f %10.4f\n", r.serial_step_time_s, e.time.serial_step_time_s);
  std::printf("  critical path (s)              %10.4f\n", r.critical_path_s);
  std::printf("  exposed a2a / zero / offload (s) %8.4f / %.4f / %.4f\n", r.exposed_comm_s.a2a_s,
              r.exposed_comm_s.zero_s, r.exposed_comm_s.offload_s);
  if (r.exposed_comm_s.ring_s > 0) std::printf("  exposed ring attention (s)      %8.4f\n", r.exposed_comm_s.ring_s);
  std::printf("  peak memory (GiB)              %10.2f %10.2f\n", gib(r.peak_memory_bytes),
              gib(e.memory.needed_bytes()));
  std::printf("  peak at %.4f s during %s\n", r.peak_time_s, r.peak_op.c_str());
  const auto& m = r.peak_alive;
  std::printf("    params %.2f  grads %.2f  optimizer %.2f  activations %.2f  logits %.2f  buffers %.2f  "
              "overhead %.2f GiB\n", gib(m.params_bytes), gib(m.grads_bytes), gib(m.optimizer_bytes),
              gib(m.activations_bytes), gib(m.logits_bytes), gib(m.buffers_bytes), gib(m.overhead_bytes));
  std::printf("  events: %zu (see --trace / --svg)\n", r.events.size());
  if (r.folded.count > 0) std::printf("  %s\n", spplan::sim::folded_text(r.folded).c_str());
}

}  // namespace

std::vector<spplan::FlagSpec> spplan::cli::simulate_flag_specs() {
  return {{"plan", true, "the plan to simulate", "a plan TOML file, e.g. from spplan plan --out", "required"},
          {"trace", true, "write a Chrome trace (Perfetto, chrome://tracing) of the step", "a .json path",
           "none written"},
          {"svg", true, "write a picture of the step's timeline and memory", "an .svg path", "none written"},
          {"no-overlap", false, "run every operation alone (the estimate's serial_step_time_s)"},
          spplan::cli::json_flag_spec(),
          {"events", true, "how many events --json lists", "an integer >= 0",
           std::to_string(kDefaultListedEvents)}};
}

int cmd_simulate(int argc, const char* const* argv) {
  const auto args = spplan::cli::parse_flags(argc, argv, spplan::cli::simulate_flag_specs());
  if (!args.ok()) return fail(args.status());
  const auto plan_path = args->require("plan", "a plan file, e.g. --plan plan.toml");
  if (!plan_path.ok()) return fail(plan_path.status());
  size_t listed = kDefaultListedEvents;
  if (const auto n = args->get("events")) {
    const auto value = spplan::parse_int("--events", *n, 0, 1000000000);
    if (!value.ok()) return fail(value.status());
    listed = static_cast<size_t>(*value);
  }
  const auto plan = spplan::load_plan(*plan_path);
  if (!plan.ok()) return fail(plan.status());
  // Both outputs at once: apart from the plan and the files it names, and from each other (the
  // SVG written over the trace would leave one of the two asked for).
  const std::vector<spplan::NamedPath> inputs = spplan::cli::plan_input_files(*plan_path, *plan);
  std::vector<spplan::NamedPath> outputs;
  for (const char* flag : {"trace", "svg"}) {
    if (const auto out = args->get(flag)) outputs.push_back({std::string("--") + flag, *out, spplan::PathRole::kFile});
  }
  if (const auto s = spplan::check_outputs_apart(inputs, outputs); !s.is_ok()) return fail(s);

  const bool overlap = !args->has("no-overlap");
  const auto mode = overlap ? spplan::sim::Mode::kOverlap : spplan::sim::Mode::kNoOverlap;
  const auto result = spplan::sim::simulate_plan(*plan, mode);
  if (const auto trace = args->get("trace")) {
    if (auto s = spplan::sim::write_chrome_trace(result, *trace); !s.is_ok()) return fail(s);
  }
  const auto estimate = spplan::costmodel::estimate(*plan);
  if (const auto svg = args->get("svg")) {
    const auto& k = plan->knobs;
    const std::string title = plan->model.name + " on " + std::to_string(plan->cluster.num_gpus) + " GPUs, sp " +
                              std::to_string(k.sp) + (k.cp > 1 ? " x cp " + std::to_string(k.cp) : std::string()) + ", " +
                              std::to_string(plan->seq_len) + " tokens";
    if (auto s = spplan::sim::write_timeline_svg(result, title, estimate.capacity_bytes, *svg); !s.is_ok()) return fail(s);
  }
  if (!estimate.fits) {
    spplan::cli::warn(*plan_path + ": the plan does not fit (" + estimate.reason() +
                      "); the step is simulated as if it did");
  }
  if (args->has("json")) {
    auto j = result_json(result, estimate, overlap, listed);
    j["fits"] = estimate.fits;
    spplan::cli::print_json(std::move(j));
  } else {
    print_table(result, estimate, overlap);
  }
  return 0;
}
