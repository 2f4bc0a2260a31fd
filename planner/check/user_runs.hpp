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

// The band a check of `plan` holds its numbers against: every shipped results file
// (MeasuredAccuracy::default_dir) and each of `runs_files` together, and the runs files alone.
// A runs file that cannot be read fails in one line; a missing shipped folder counts nothing.
Result<Band> band_for(const PlanSpec& plan, const std::vector<std::string>& runs_files);

}  // namespace spplan::check
