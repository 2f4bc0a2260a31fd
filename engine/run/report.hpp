// The run's results: the per-step progress line and the one JSON object of --json
// (DESIGN.md `run --json`, plus the breakdowns validation compares line by line).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/device/alloc_conf.hpp"
#include "engine/run/predict.hpp"

namespace spplan::engine {

struct RunReport {
  std::vector<double> losses;                       // one per step run by this invocation
  double tokens_per_s = 0;                          // whole world, steps after the warm-up step
  double step_time_s = 0;                           // mean over the same steps
  std::vector<double> step_times_s;                 // every step of this invocation, rank 0
  std::vector<double> lrs;                          // the learning rate each step used
  std::vector<double> grad_norms;                   // each step's global gradient L2 norm, before clipping
  int64_t peak_memory_bytes = 0;                    // largest over ranks
  int64_t peak_rank = 0;                            // the rank that had it
  int64_t peak_reserved_bytes = 0;                  // live + cached blocks, largest over ranks
  std::optional<int64_t> device_used_bytes;         // CUDA: as nvidia-smi shows it, largest over ranks
  AllocConf alloc_conf;                             // the caching allocator's settings (alloc_conf.hpp)
  std::map<std::string, int64_t> memory_bytes;      // that rank's peak, by costmodel category
  int64_t peak_host_memory_bytes = 0;               // offloaded state (HostScope), largest over ranks
  Prediction prediction;
  std::map<std::string, double> phases_s;           // mean seconds per step, rank 0
  int64_t world = 1, sp = 1, cp = 1, dp = 1, micro_batch = 1, grad_accum = 1, seq_len = 0, first_step = 1;
  int64_t num_params = 0, threads_per_rank = 1;
  std::string model, act_ckpt, device;
  std::optional<bool> cpu_bf16_emulated;            // bf16 runs on a CPU: cpu_bf16.hpp's verdict
  std::string attention_backend = "libtorch";       // the SDPA kernel attention ran on (attention.hpp)
  std::string attention_backend_choice = "cpu";     // how it was chosen (the measured times on CUDA)
  std::string fused_kernels = "none";               // --tiled-loss's fused ops: "cuda", "aten"; else "none"
  int64_t ranks_on_host = 1;                        // ranks sharing this machine (a CPU's cores: predict.hpp)
  std::string settings = "{}";                      // run_log.hpp run_settings(), as JSON text
  int stopped_by_signal = 0;                        // SIGTERM/SIGINT ended the run after its last step here
  // SPPLAN_ENGINE_KERNEL_CLOCK=1 on a CPU (kernel_clock.hpp): mean self seconds per step, rank 0,
  // by kernel class and for the ops that took the most; empty otherwise (null in the JSON).
  std::map<std::string, double> kernel_classes_s, kernel_top_ops_s;
  std::map<std::string, double> kernel_top_ops_calls;  // calls per step of each of kernel_top_ops_s
  std::vector<std::string> peak_memory_ops;         // the ops running when rank 0's peak was reached
  // --eval-data: each evaluation's step, mean loss and valid tokens (eval.hpp), in order.
  std::vector<int64_t> eval_steps;
  std::vector<double> eval_losses;
  std::vector<int64_t> eval_tokens;
};

std::string progress_line(int64_t step, int64_t total_steps, double loss, double tokens_per_s, double step_time_s,
                          int64_t peak_memory_bytes, double lr, double grad_norm);
std::string to_json(const RunReport& report);

}  // namespace spplan::engine
