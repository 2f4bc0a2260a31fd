// MeasuredAccuracy: how accurate the planner measured itself, per GPU and per trainer, read from
// the validation results (validation/results/NAME.json, what `spplan validate published
// validation/NAME.csv --json` prints; scripts/validation-results.sh regenerates them). The CLI's
// verdicts, the GUI's trust line and its banner all read it here.
//
// A results file's "rows" each carry "gpu", usually "trainer", and where the run measured them
// "memory" {"delta_pct"} and one of "tokens_per_s", "tflops_per_gpu" or "step_time_s"
// {"delta_pct"} (prediction minus measurement, percent), and on a published longest run
// "max_seq_ratio". Accuracy is the mean and the largest
// |delta_pct| over the rows. Speed counts all three, except on rows marked
// "throughput_consistent": false (the publication's throughput contradicts itself), which the
// validation summary leaves out too; their memory still counts.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan {

struct ErrorStats {
  int count = 0;
  double mean_abs_pct = 0;
  double max_abs_pct = 0;
  // The signed extremes: how far a prediction fell below its measurement (memory: what a run
  // needed beyond the prediction) and rose above it; 0 when no row did.
  double max_under_pct = 0;
  double max_over_pct = 0;
};

// max-seq's answer for a published longest run's knobs over that run's length (a row's
// "max_seq_ratio"): those runs are lengths that ran, not edges, so they bound an answer from below.
struct RatioRange {
  int count = 0;
  double min = 0;
  double max = 0;
};

struct Accuracy {
  ErrorStats memory;        // peak memory
  ErrorStats speed;         // tokens/s, TFLOPS per GPU or step time
  RatioRange longest_runs;  // max-seq against published longest runs
};

class MeasuredAccuracy {
 public:
  // Every file of `paths`, their rows together. Fails (file, key, what is wrong) when a file is
  // missing, not JSON, a row lacks "gpu", "trainer" is not a string, or a delta_pct is not a
  // number; a bad file adds none of its rows.
  static Result<MeasuredAccuracy> load(const std::vector<std::string>& paths);
  // Every *.json in `dir`, by name; fails when the folder has none.
  static Result<MeasuredAccuracy> load_dir(const std::string& dir);
  // The results folder shipped beside the configs directory (configs_dir()/../validation/results).
  static std::string default_dir();

  // Over every trainer's rows on `gpu` (a preset name); counts 0 when no row measured it.
  Accuracy for_gpu(const std::string& gpu) const;
  // Over the rows of `trainer` on `gpu` only.
  Accuracy for_trainer(const std::string& gpu, const std::string& trainer) const;
  // The GPUs with at least one row, sorted.
  std::vector<std::string> gpus() const;
  // The memory error a plan of `trainer` on `gpu` is held against: that trainer's rows there when
  // it has any, else every row on the GPU. `*scope` gets "arctic on h100-80gb" or "h100-80gb".
  ErrorStats memory_error(const std::string& gpu, const std::string& trainer, std::string* scope) const;

 private:
  Status add_file(const std::string& path);

  std::map<std::string, Accuracy> by_gpu_;
  std::map<std::pair<std::string, std::string>, Accuracy> by_gpu_trainer_;
};

}  // namespace spplan
