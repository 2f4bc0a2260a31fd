// A run against its plan: predicted against measured (peak memory, step time, tokens/s), and the
// findings that say the run is not doing what the plan says, each with the documented cause it
// points to. The band (how far the planner measured itself off) is the caller's: the shipped
// validation results and the user's own runs (user_runs.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/check/run_measurements.hpp"
#include "planner/config/plan_spec.hpp"

namespace spplan::check {

struct Comparison {
  std::string quantity;     // "peak_memory", "step_time", "tokens_per_s"
  std::string measured_as;  // "torch max_memory_allocated", "nvidia-smi memory.used", ...
  double predicted = 0;     // bytes, seconds or tokens/s, as the quantity
  double measured = 0;
  double error_pct() const { return measured != 0 ? 100.0 * (predicted - measured) / measured : 0; }
};

struct Finding {
  std::string id;     // "not_split", "above_peak", "tokens_times_ranks", "eval_loss_times_cp", "step_time_far", ...
  std::string words;  // what the logs show, against the plan's numbers
  std::string cause;  // the documented cause it points to
  bool not_the_plan = false;  // the run is not the plan (exit 1), not only a prediction that missed
};

// How far the planner measured itself off for the plan's trainer and GPU: `all` over every run,
// `yours` over the user's own runs (count 0: none).
struct Band {
  ErrorStats memory, speed;
  std::string scope;  // "hf on h100-80gb"
  ErrorStats your_memory, your_speed;
};

struct CheckReport {
  std::vector<Comparison> comparisons;
  std::vector<Finding> findings;
  bool as_planned() const;
};

// REQUIRES: check_plan(plan) is ok.
CheckReport check_run(const PlanSpec& plan, const RunMeasurements& run, const Band& band);

// "measured error 3.8%, max 14.8% (29 runs of h100-80gb; 3 of your runs: 2.2%, max 4.0%)", "not validated (no
// run of hf on a100-80gb)".
std::string band_words(const ErrorStats& all, const ErrorStats& yours, const std::string& scope);

}  // namespace spplan::check
