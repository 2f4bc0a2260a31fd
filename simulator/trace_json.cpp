#include "simulator/trace_json.hpp"

#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"

namespace spplan::sim {
namespace {

using nlohmann::json;
constexpr int kPid = 1;
constexpr double kMicrosPerSecond = 1e6;

int tid_of(Resource resource) { return static_cast<int>(resource) + 1; }  // tid 0 is the process

const char* track_name(Resource resource) {
  switch (resource) {
    case Resource::kCompute: return "compute stream (kernels + Ulysses all-to-all)";
    case Resource::kComm: return "comm stream (ZeRO gathers, reductions)";
    case Resource::kH2D: return "H2D copy engine";
    case Resource::kD2H: return "D2H copy engine";
    case Resource::kHost: return "host CPU";
  }
  return "?";
}

void add_metadata(json* events) {
  events->push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0},
                     {"args", {{"name", "spplan simulate: one step, one rank"}}}});
  for (int r = 0; r < kNumResources; ++r) {
    const auto resource = static_cast<Resource>(r);
    events->push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid_of(resource)},
                       {"args", {{"name", track_name(resource)}}}});
    events->push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid_of(resource)},
                       {"args", {{"sort_index", r}}}});
  }
}

void add_ops(const SimResult& result, json* events) {
  for (const SimEvent& e : result.events) {
    events->push_back({{"name", e.name}, {"cat", category_name(e.category)}, {"ph", "X"}, {"pid", kPid},
                       {"tid", tid_of(e.resource)}, {"ts", e.start_s * kMicrosPerSecond},
                       {"dur", (e.end_s - e.start_s) * kMicrosPerSecond}});
  }
}

void add_memory(const SimResult& result, json* events) {
  for (const MemorySample& s : result.memory) {
    events->push_back({{"name", "device memory"}, {"ph", "C"}, {"pid", kPid}, {"ts", s.time_s * kMicrosPerSecond},
                       {"args", {{"GiB", gib(s.bytes)}}}});
  }
  events->push_back({{"name", "memory peak: " + result.peak_op}, {"ph", "i"}, {"s", "g"}, {"pid", kPid},
                     {"tid", tid_of(Resource::kCompute)}, {"ts", result.peak_time_s * kMicrosPerSecond},
                     {"args", {{"GiB", gib(result.peak_memory_bytes)}}}});
}

// Where folded micro steps would run: an instant event before the last micro step drawn, saying
// which were folded and what they add (simulate.hpp FoldedMicroSteps).
void add_folded_note(const SimResult& result, json* events) {
  const FoldedMicroSteps& f = result.folded;
  if (f.count <= 0) return;
  const std::string last = "m" + std::to_string(f.of - 1) + ".";
  double at_s = result.shown_time_s;
  for (const SimEvent& e : result.events) {
    if (e.name.rfind(last, 0) == 0) {
      at_s = e.start_s;
      break;
    }
  }
  events->push_back({{"name", folded_text(f)}, {"ph", "i"}, {"s", "g"}, {"pid", kPid},
                     {"tid", tid_of(Resource::kCompute)}, {"ts", at_s * kMicrosPerSecond},
                     {"args", {{"folded_micro_steps", f.count}, {"of", f.of}, {"same_as", "m" + std::to_string(f.same_as)},
                               {"each_s", f.each_s}, {"step_time_s", result.step_time_s}}}});
}

}  // namespace

std::string chrome_trace_json(const SimResult& result) {
  json events = json::array();
  add_metadata(&events);
  add_ops(result, &events);
  add_memory(result, &events);
  add_folded_note(result, &events);
  const json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return trace.dump();
}

Status write_chrome_trace(const SimResult& result, const std::string& path) {
  return write_file_atomically(path, chrome_trace_json(result));
}

}  // namespace spplan::sim
