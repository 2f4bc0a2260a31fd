// A user's own checked runs as measured rows: `spplan calibrate --from-run` appends one row per run
// to a runs file beside the user's GPU file (my-h100.toml -> my-h100.runs.json), in the shape of the
// shipped validation results (planner/accuracy/measured_accuracy.hpp: "rows", each with "gpu",
// "trainer", "memory" {"delta_pct"}, "step_time_s" {"delta_pct"}), so MeasuredAccuracy reads it
// beside them and every band counts it. The accuracy library is not changed: it already reads any
// number of such files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/check/run_check.hpp"
#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan::check {

// "dir/my-h100.runs.json" for "dir/my-h100.toml" (any other name: the name + ".runs.json").
std::string runs_file_beside(const std::string& gpu_file);

// The measured row of one checked run: its plan's GPU (as measured_as) and trainer, the model,
// length and degrees, and the predicted-minus-measured error of each comparison; `logs` the files.
nlohmann::json run_row(const PlanSpec& plan, const CheckReport& report, const std::vector<std::string>& logs);

// `row` appended to the runs file at `path` (made when absent; written whole through a temporary
// file, so a failure leaves the old one). Fails naming the file when it is not a runs file.
Status append_run(const std::string& path, const nlohmann::json& row);

// SPPLAN_RUNS: the user's runs files, separated by ":", which every command's verdicts and bands
// count beside the shipped validation results (cli/common.cpp measured_accuracy), so a plan's
// verdict cites them. Empty when the variable is unset or empty.
inline constexpr const char* kRunsVariable = "SPPLAN_RUNS";
std::vector<std::string> runs_files_from_environment();

// The shipped validation results files (MeasuredAccuracy::default_dir), sorted; none when absent.
std::vector<std::string> shipped_results();

// "; 3 of your runs (SPPLAN_RUNS): measured error 2.2%, max 4.0%" for the runs of `runs_files` in
// the plan's scope (its trainer on its GPU, else its GPU), "" when none of them is there or a file
// cannot be read (the caller that loads them reports that).
std::string your_runs_words(const PlanSpec& plan, const std::vector<std::string>& runs_files);

// The band a check of `plan` holds its numbers against: every shipped results file
// (MeasuredAccuracy::default_dir) and each of `runs_files` together, and the runs files alone.
// A runs file that cannot be read fails in one line; a missing shipped folder counts nothing.
Result<Band> band_for(const PlanSpec& plan, const std::vector<std::string>& runs_files);

}  // namespace spplan::check
