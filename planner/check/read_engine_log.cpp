// spplan's own engine: the --json report (engine/run/report.cpp to_json) and the --log JSON lines
// (engine/run/run_log.hpp), whose last line is that report.
#include "planner/check/json_text.hpp"
#include "planner/check/readers.hpp"

namespace spplan::check {
namespace {

int64_t integer_at(const nlohmann::json& j, const char* key) {
  const auto v = number_at(j, key);
  return v && *v >= 1 && *v <= 1e9 ? static_cast<int64_t>(*v) : 0;
}

}  // namespace

Result<RunMeasurements> read_engine_report(const std::string& where, const nlohmann::json& report) {
  RunMeasurements run;
  run.formats = {"spplan-run-json"};
  run.peak_allocated_bytes = number_at(report, "peak_memory_bytes");
  run.peak_reserved_bytes = number_at(report, "peak_reserved_bytes");
  run.device_used_bytes = number_at(report, "device_used_bytes");
  run.tokens_per_s = number_at(report, "tokens_per_s");
  run.sp = integer_at(report, "sp");
  run.cp = integer_at(report, "cp");
  const auto device = report.find("device");
  run.ran_on_cpu = device != report.end() && device->is_string() && *device == "cpu";
  const auto times = report.find("step_times_s");
  if (times != report.end() && times->is_array()) {
    for (const nlohmann::json& t : *times) {
      if (!t.is_number() || !(t.get<double>() > 0)) {
        return Status::invalid(where + ": key \"step_times_s\": an entry that is not a positive number (allowed: seconds)");
      }
      run.step_times_s.push_back(t.get<double>());
    }
  }
  const auto losses = report.find("losses");
  if (losses != report.end() && losses->is_array() && !losses->empty() && losses->back().is_number()) {
    run.train_loss = losses->back().get<double>();
  }
  return run;
}

Result<RunMeasurements> read_engine_log(const std::string& where, const std::vector<nlohmann::json>& lines) {
  RunMeasurements run;
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& line = lines[i];
    const auto event = line.find("event");
    if (event == line.end() || !event->is_string()) {
      return Status::invalid(where + ": line " + std::to_string(i + 1) +
                             ": key \"event\": missing (allowed: step, eval, checkpoint, summary)");
    }
    if (*event == "summary") {
      SPPLAN_ASSIGN_OR_RETURN(RunMeasurements summary, read_engine_report(where, line));
      summary.step_times_s.clear();  // the steps' own lines hold them
      merge_into(&run, summary);
    } else if (*event == "step") {
      if (auto t = number_at(line, "step_time_s"); t && *t > 0) run.step_times_s.push_back(*t);
      if (auto loss = number_at(line, "loss")) run.train_loss = loss;
      if (auto peak = number_at(line, "peak_memory_bytes")) {
        run.memory_samples_bytes.push_back(*peak);  // the allocator peak each step line reports
        run.memory_samples_of = MemoryMeasure::kAllocated;
        if (!run.peak_allocated_bytes || *peak > *run.peak_allocated_bytes) run.peak_allocated_bytes = peak;
      }
    } else if (*event == "eval") {
      if (auto eval = number_at(line, "eval_loss")) run.eval_loss = eval;
    }
  }
  run.formats = {"spplan-run-log"};
  return run;
}

}  // namespace spplan::check
