#include "planner/accuracy/measured_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"

namespace spplan {
namespace {

const char* const kRegenerate = "regenerate with scripts/validation-results.sh";

void add(ErrorStats* stats, double delta_pct) {
  const double a = std::fabs(delta_pct);
  stats->mean_abs_pct = (stats->mean_abs_pct * stats->count + a) / (stats->count + 1);
  stats->max_abs_pct = std::max(stats->max_abs_pct, a);
  stats->max_under_pct = std::max(stats->max_under_pct, -delta_pct);
  stats->max_over_pct = std::max(stats->max_over_pct, delta_pct);
  ++stats->count;
}

void add(RatioRange* range, double ratio) {
  range->min = range->count == 0 ? ratio : std::min(range->min, ratio);
  range->max = range->count == 0 ? ratio : std::max(range->max, ratio);
  ++range->count;
}

// The errors of one row: memory, and speed unless the row's throughput is marked inconsistent.
struct RowDeltas {
  std::vector<double> memory, speed, longest_run_ratio;
};

// `key` of `row` ("rows[i]." + key in messages): absent, or an object whose delta_pct is a number.
Status read_delta(const std::string& path, const std::string& row_key, const nlohmann::json& row, const char* key,
                  std::vector<double>* out) {
  if (!row.contains(key)) return Status::ok();
  const nlohmann::json& value = row[key];
  if (!value.is_object() || !value.contains("delta_pct") || !value["delta_pct"].is_number()) {
    return Status::invalid(path + ": key \"" + row_key + "." + key + ".delta_pct\": missing or not a number (allowed: " +
                           "a number, percent; " + kRegenerate + ")");
  }
  out->push_back(value["delta_pct"].get<double>());
  return Status::ok();
}

Result<RowDeltas> read_row(const std::string& path, const std::string& row_key, const nlohmann::json& row) {
  RowDeltas deltas;
  SPPLAN_RETURN_IF_ERROR(read_delta(path, row_key, row, "memory", &deltas.memory));
  if (row.contains("max_seq_ratio")) {
    if (!row["max_seq_ratio"].is_number() || !(row["max_seq_ratio"].get<double>() > 0)) {
      return Status::invalid(path + ": key \"" + row_key + ".max_seq_ratio\": not a positive number (allowed: " +
                             "a positive number; " + kRegenerate + ")");
    }
    deltas.longest_run_ratio.push_back(row["max_seq_ratio"].get<double>());
  }
  bool consistent = true;
  if (row.contains("throughput_consistent")) {
    if (!row["throughput_consistent"].is_boolean()) {
      return Status::invalid(path + ": key \"" + row_key + ".throughput_consistent\": not true or false (allowed: " +
                             "true, false; " + kRegenerate + ")");
    }
    consistent = row["throughput_consistent"].get<bool>();
  }
  if (consistent) {
    for (const char* key : {"tokens_per_s", "tflops_per_gpu", "step_time_s"}) {
      SPPLAN_RETURN_IF_ERROR(read_delta(path, row_key, row, key, &deltas.speed));
    }
  }
  return deltas;
}

void add_row(Accuracy* acc, const RowDeltas& deltas) {
  for (double d : deltas.memory) add(&acc->memory, d);
  for (double d : deltas.speed) add(&acc->speed, d);
  for (double r : deltas.longest_run_ratio) add(&acc->longest_runs, r);
}

}  // namespace

Status MeasuredAccuracy::add_file(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  std::ifstream in(path);
  if (!in) return Status::invalid(path + ": cannot be read (allowed: a readable file)");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    return Status::invalid(path + ": not a JSON object (" + e.what() +
                           "; allowed: the output of `spplan validate published FILE.csv --json`)");
  }
  if (!doc.is_object()) {
    return Status::invalid(path + ": not a JSON object (allowed: the output of `spplan validate published FILE.csv --json`)");
  }
  if (!doc.contains("rows") || !doc["rows"].is_array()) {
    return Status::invalid(path + ": key \"rows\": missing or not an array (allowed: an array of rows)");
  }
  // Read every row before adding any, so a bad file leaves the table as it was.
  std::vector<std::pair<std::pair<std::string, std::string>, RowDeltas>> parsed;
  int index = 0;
  for (const nlohmann::json& row : doc["rows"]) {
    const std::string row_key = "rows[" + std::to_string(index++) + "]";
    if (!row.is_object() || !row.contains("gpu") || !row["gpu"].is_string()) {
      return Status::invalid(path + ": key \"" + row_key + ".gpu\": missing (allowed: a GPU preset name; " + kRegenerate + ")");
    }
    std::string trainer;
    if (row.contains("trainer")) {
      if (!row["trainer"].is_string()) {
        return Status::invalid(path + ": key \"" + row_key + ".trainer\": not a string (allowed: a trainer name; " +
                               kRegenerate + ")");
      }
      trainer = row["trainer"].get<std::string>();
    }
    SPPLAN_ASSIGN_OR_RETURN(RowDeltas deltas, read_row(path, row_key, row));
    parsed.push_back({{row["gpu"].get<std::string>(), trainer}, std::move(deltas)});
  }
  for (const auto& [key, deltas] : parsed) {
    add_row(&by_gpu_[key.first], deltas);
    if (!key.second.empty()) add_row(&by_gpu_trainer_[key], deltas);
  }
  return Status::ok();
}

Result<MeasuredAccuracy> MeasuredAccuracy::load(const std::vector<std::string>& paths) {
  MeasuredAccuracy table;
  for (const std::string& path : paths) SPPLAN_RETURN_IF_ERROR(table.add_file(path));
  return table;
}

Result<MeasuredAccuracy> MeasuredAccuracy::load_dir(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) paths.push_back(entry.path().string());
  }
  if (paths.empty()) {
    return Status::invalid(dir + ": no results file (*.json) in the folder (allowed: a folder written by " +
                           "scripts/validation-results.sh)");
  }
  std::sort(paths.begin(), paths.end());
  return load(paths);
}

std::string MeasuredAccuracy::default_dir() { return configs_dir() + "/../validation/results"; }

Accuracy MeasuredAccuracy::for_gpu(const std::string& gpu) const {
  const auto it = by_gpu_.find(gpu);
  return it == by_gpu_.end() ? Accuracy{} : it->second;
}

Accuracy MeasuredAccuracy::for_trainer(const std::string& gpu, const std::string& trainer) const {
  const auto it = by_gpu_trainer_.find({gpu, trainer});
  return it == by_gpu_trainer_.end() ? Accuracy{} : it->second;
}

std::vector<std::string> MeasuredAccuracy::gpus() const {
  std::vector<std::string> names;
  for (const auto& [gpu, acc] : by_gpu_) names.push_back(gpu);
  return names;
}

ErrorStats MeasuredAccuracy::memory_error(const std::string& gpu, const std::string& trainer, std::string* scope) const {
  const ErrorStats own = for_trainer(gpu, trainer).memory;
  if (own.count > 0) {
    *scope = trainer + " on " + gpu;
    return own;
  }
  *scope = gpu;
  return for_gpu(gpu).memory;
}

}  // namespace spplan
