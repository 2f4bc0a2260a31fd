// Watching a run: the --log file (JSON lines), the run's own settings for its report, and the
// numbers of the progress line that need more than one step (tokens/s, MFU, ETA).
//
// --log FILE: one JSON object per line, written and flushed as each event happens, so a run stopped
// at any point (a kill, a node failure) keeps every step before it:
//   {"event": "step", "step": 7, "loss": ..., "learning_rate": ..., "grad_norm": ..., "tokens": ...,
//    "tokens_per_s": ..., "step_time_s": ..., "peak_memory_bytes": ..., "mfu": ..., "eta_s": ...,
//    "epoch": ..., "data_position": ..., "time": <unix seconds>}
//   (data_position: the token of --data the step's first sequence starts at, for files read in
//   order; null for synthetic or shuffled data)
//   {"event": "eval", "step": 10, "eval_loss": ..., "eval_tokens": ...}
//   {"event": "checkpoint", "step": 10, "dir": "..."}
//   {"event": "summary", ...}   the --json report, as the last line (also after SIGTERM/SIGINT)
// The metric names are those of Hugging Face Trainer's log_history ("loss", "learning_rate",
// "grad_norm", "eval_loss", "epoch": passes over the data), so a script written for
// trainer_state.json reads it, pandas.read_json(lines=True) loads it, and one loop feeds it to
// TensorBoard's SummaryWriter or wandb.log. A fresh run truncates the file. A resume keeps the
// lines up to its checkpoint's step and appends: what a killed run logged past its last checkpoint
// (steps that are trained again) is dropped, so every step appears once (the rewrite goes through
// a temporary file and a rename: a kill during it leaves the old log).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/run/options.hpp"
#include "engine/run/step_stats.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

class RunLog {
 public:
  RunLog() = default;  // no --log: every call does nothing
  // Opens `path`: truncated for a fresh run; for a run resumed from step `resumed_step`, kept up to
  // that step and appended to. An error names --log and the path.
  static Result<RunLog> open(const std::string& path, std::optional<int64_t> resumed_step);
  void write(const nlohmann::json& line);  // one line, flushed
  bool enabled() const { return out_ != nullptr; }

 private:
  std::unique_ptr<std::ofstream> out_;
};

// What the progress line and the step's log line say beyond the step itself.
struct StepWatch {
  int64_t step = 0, total_steps = 0;
  double tokens_per_s = 0;           // this step's valid tokens / its time, whole world
  std::optional<double> mfu;         // predict.hpp mfu_step_s / step time
  double eta_s = 0;                  // remaining steps x the mean step time so far
  double epoch = 0;                  // passes over --data (0: synthetic)
  std::optional<int64_t> data_position;  // the stream token the step began at (files read in order)
  int64_t peak_memory_bytes = 0;
};

nlohmann::json step_log_line(const StepStats& st, const StepWatch& w);

// "step 7/20  loss ...  tokens/s 812  MFU 12.3%  ETA 1m 05s": report.hpp's progress_line plus
// MFU (when the machine's peak is known) and the time left.
std::string watch_progress_line(const StepStats& st, const StepWatch& w);

// "1h 02m", "3m 05s", "12s".
std::string duration_text(double seconds);

// The run's own settings, for its report: what produced the numbers, so a result can be rerun.
nlohmann::json run_settings(const RunOptions& o);

}  // namespace spplan::engine
