// ArcticTraining's metrics file (config/trainer.py train_log_metrics_path, default
// "train-log-metrics.jsonl"): rank 0 appends Metrics.summary_dict each train_log_iter_interval
// optimizer steps (trainer/trainer.py), with DeepSpeed's wall-clock timers when they run. Keys from
// arctic_training 0.8.0 metrics.py: "iter", "loss", "loss/eval", "iter_time" (seconds, the mean
// over ranks), "iter_tflops" (the ranks' FLOPs over their time: per GPU), "lr", "epoch".
#include "planner/check/json_text.hpp"
#include "planner/check/readers.hpp"

namespace spplan::check {

Result<RunMeasurements> read_arctic_metrics(const std::string& where, const std::vector<nlohmann::json>& lines) {
  RunMeasurements run;
  run.formats = {"arctic-metrics"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json& line = lines[i];
    if (!number_at(line, "iter")) {
      return Status::invalid(where + ": line " + std::to_string(i + 1) +
                             ": key \"iter\": missing or not a number (allowed: ArcticTraining's metrics lines)");
    }
    if (auto t = number_at(line, "iter_time"); t && *t > 0) run.step_times_s.push_back(*t);
    if (auto loss = number_at(line, "loss")) run.train_loss = loss;
    if (auto eval = number_at(line, "loss/eval")) run.eval_loss = eval;
    if (auto tflops = number_at(line, "iter_tflops")) run.tflops_per_gpu = tflops;
  }
  return run;
}

}  // namespace spplan::check
