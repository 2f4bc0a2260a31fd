// One reader per run-log format, each turning what a training stack writes into RunMeasurements.
// Each takes the file's text (or its parsed JSON) and `where` (the path, for messages) and fails in
// one line naming the file, the key or line, the value and what is allowed; none reads a file
// (run_log.hpp does), so the fuzz targets drive them directly. Each format was read from the
// stack's own code at the release named beside its reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/check/run_measurements.hpp"
#include "planner/core/status.hpp"

namespace spplan::check {

// transformers' TrainerState.save_to_json (trainer_state.json; TRL's trainers inherit it): the
// log_history entries' loss, eval_loss, num_input_tokens_seen, train_runtime, train_tokens_per_second
// and, with skip_memory_metrics=False, the *_mem_gpu_* deltas. Read from transformers 5.24.0.
Result<RunMeasurements> read_hf_trainer_state(const std::string& where, const nlohmann::json& state);

// spplan run --json: the report object (engine/run/report.cpp).
Result<RunMeasurements> read_engine_report(const std::string& where, const nlohmann::json& report);
// spplan run --log: JSON lines of "step", "eval", "checkpoint" and "summary" events (engine/run/run_log.hpp).
Result<RunMeasurements> read_engine_log(const std::string& where, const std::vector<nlohmann::json>& lines);

// ArcticTraining's train_log_metrics_path (JSON lines of Metrics.summary_dict, written by rank 0
// each train_log_iter_interval steps): iter, loss, loss/eval, iter_time, iter_tflops. Read from
// arctic_training 0.8.0 (metrics.py, trainer/trainer.py).
Result<RunMeasurements> read_arctic_metrics(const std::string& where, const std::vector<nlohmann::json>& lines);

// A DeepSpeed log: wall_clock_breakdown's "time (ms) | fwd: F | bwd: B | step: S" lines
// (utils/timer.py SynchronizedWallClockTimer.log), see_memory_usage's "MA .. GB Max_MA .. GB CA ..
// GB Max_CA .. GB" (runtime/utils.py) and ThroughputTimer's "MaxMemAllocated=..GB". Read from
// deepspeed 0.18.9, which divides by 1024^3 and prints "GB".
Result<RunMeasurements> read_deepspeed_log(const std::string& where, std::string_view text);

// Lines a training script prints from torch.cuda.max_memory_allocated() / max_memory_reserved():
// the name, then ":" or "=", a number and an optional unit (B, KiB, MiB, GiB, KB, MB, GB; none: bytes).
Result<RunMeasurements> read_torch_memory_lines(const std::string& where, std::string_view text);

// `nvidia-smi --query-gpu=...,memory.used,... --format=csv [-l N]`: the header names the column
// ("memory.used [MiB]"), each row gives "40123 MiB" (or 40123 with nounits). Read from the
// nvidia-smi manual (--help-query-gpu) of driver 550.
Result<RunMeasurements> read_nvidia_smi_csv(const std::string& where, std::string_view text);

// torch.cuda.memory._dump_snapshot's pickle (read without Python: pickle_value.hpp), of the busiest
// device: reserved at the snapshot (the segments' total_size) or the trace's most, and with
// _record_memory_history's trace, the allocator's peak and its level after each alloc/free_completed
// (at most 4096 samples). Read from torch 2.15.0 (torch/cuda/memory.py, torch/cuda/_memory_viz.py).
Result<RunMeasurements> read_torch_snapshot(const std::string& where, std::string_view bytes);

}  // namespace spplan::check
