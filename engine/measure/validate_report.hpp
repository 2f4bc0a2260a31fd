// What `validate engine` (validate.hpp) prints of its rows: the table, or with --json the summary
// object around them (DESIGN.md `validate engine --json`: cases, max_mem_error_pct,
// max_time_error_pct, rows).
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/config/cluster_spec.hpp"

namespace spplan::engine {

// The specs the cases are priced on: the calibrated one always; on a GPU also the preset.
struct Machines {
  GpuSpec calibrated;
  std::optional<GpuSpec> preset;
  bool shared = false;  // CPU: the ranks share the machine
  std::string device;   // what ran the cases: the GPU's name, or the CPU's model and core count
};

// Mean and max |error| of one column over the rows that have it.
struct Errors {
  double mean = std::nan(""), max = 0;
  int n = 0;
};

// A ring (or Ulysses x ring) case beside the Ulysses case of the same degree, model, sequence and
// knobs: the step-time ratio ring / Ulysses measured and predicted, and how far the prediction is
// (the target: within 10 %).
struct RingPair {
  std::string ring, ulysses;
  double measured_ratio = 0, predicted_ratio = 0, error_pct = 0;
};
std::vector<RingPair> ring_pairs(const nlohmann::json& rows);

struct CaseSummary {
  int ok = 0, failed = 0, boundary = 0, boundary_right = 0;
  Errors mem, time, host, preset_mem, preset_time;
  // CPU: per kernel class (kernel_clock.hpp), the mean over the cases of (predicted - measured) /
  // measured, signed, where the class took at least 2 % of the measured step.
  std::map<std::string, double> kernel_class_mean_error_pct;
  std::vector<RingPair> ring_pairs;
};

CaseSummary summarize_cases(const nlohmann::json& rows);

// The table on stdout, under lines naming the device the cases ran on and the rates they were
// priced with: a row per case (measured, predicted, delta %), then the means and maxima.
void print_table(const nlohmann::json& rows, const CaseSummary& sum, const Machines& m);

// The rates the cases were priced with (the calibrated spec's peaks times its efficiencies): TFLOP/s
// of the GEMM and the attention forward and backward in fp32 and bf16, GB/s of memory and of the
// elementwise class. A prediction is only as good as its calibration, and one calibration made on
// a loaded machine moves every row (once by 25 %): the report keeps what it priced with.
nlohmann::json priced_rates(const GpuSpec& spec);

// The --json object (its "priced_with": priced_rates of the calibrated spec).
nlohmann::json summary_json(const CaseSummary& s, const Machines& m, const nlohmann::json& rows);

}  // namespace spplan::engine
