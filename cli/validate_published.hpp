// `spplan validate published FILE.csv`: predictions against published measurements.
// Columns (validation/README.md): id, model, gpu, num_gpus, sp, zero, offload_optimizer,
// offload_params, act_ckpt, tiled_mlp, tiled_loss, seq_len, micro_batch, peak_mem_gb, fits,
// tokens_per_s, tflops_per_gpu, iter_time_s, reference.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/core/status.hpp"

namespace spplan::cli {

// What spplan holds itself to against published runs.
inline constexpr double kMemoryTargetPct = 10.0;
inline constexpr double kThroughputTargetPct = 20.0;
inline constexpr double kMaxSeqLowRatio = 0.8, kMaxSeqHighRatio = 1.25;

struct ValidationReport {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json summary;
  std::string table;  // the human-readable table with averages and maxima
  int misses = 0;     // rows x targets missed
};

Result<ValidationReport> validate_published(const std::string& csv_path);

// Splits one CSV line (RFC 4180 quoting: "" inside quotes is a quote). *unclosed_quote, when
// given, is set when the line ends inside a quoted cell.
std::vector<std::string> split_csv_line(const std::string& line, bool* unclosed_quote = nullptr);

}  // namespace spplan::cli
