#include "planner/check/run_log.hpp"

#include <fstream>
#include <sstream>

#include "planner/check/json_text.hpp"
#include "planner/check/readers.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::check {
namespace {

bool has(std::string_view text, std::string_view word) { return text.find(word) != std::string_view::npos; }

Status unknown_format(const std::string& where) {
  return Status::invalid(where + ": not a run log spplan reads (allowed: " + std::string(kRunLogFormats) + ")");
}

// A whole-file JSON object: the HF Trainer's state or the engine's --json report.
Result<RunMeasurements> read_json_object(const std::string& where, const nlohmann::json& j) {
  if (j.contains("log_history")) return read_hf_trainer_state(where, j);
  if (j.contains("losses") && j.contains("peak_memory_bytes")) return read_engine_report(where, j);
  return unknown_format(where);
}

// JSON lines: the engine's --log (each line an "event") or ArcticTraining's metrics ("iter").
Result<RunMeasurements> read_json_lines(const std::string& where, std::string_view text) {
  SPPLAN_ASSIGN_OR_RETURN(const std::vector<nlohmann::json> lines, parse_json_lines(where, text));
  if (lines.empty()) return unknown_format(where);
  if (lines.front().contains("event")) return read_engine_log(where, lines);
  if (lines.front().contains("iter")) return read_arctic_metrics(where, lines);
  return unknown_format(where);
}

}  // namespace

Result<RunMeasurements> read_run_log_text(const std::string& where, std::string_view text) {
  // pickle's protocol 2 and later open with the PROTO opcode, 0x80 (Python's pickletools); a memory
  // snapshot is such a pickle. Any other binary file (a NUL near its start) is no log either.
  if (!text.empty() && static_cast<unsigned char>(text.front()) == 0x80) return read_torch_snapshot(where, text);
  if (text.substr(0, 4096).find('\0') != std::string_view::npos) {
    return Status::invalid(where + ": a binary file, not a run log (allowed: " + std::string(kRunLogFormats) + ")");
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Status::invalid(where + ": empty (allowed: " + std::string(kRunLogFormats) + ")");
  if (text[first] == '{') {
    // One object over many lines, or one object a line: a file of one line is either.
    const size_t newline = text.find('\n', first);
    const bool one_line = newline == std::string_view::npos || text.find_first_not_of(" \t\r\n", newline) == std::string_view::npos;
    auto whole = parse_json_value(where, text);
    if (whole.ok() && whole->is_object()) {
      if (one_line && (whole->contains("event") || whole->contains("iter"))) return read_json_lines(where, text);
      return read_json_object(where, *whole);
    }
    // Not one object: JSON lines when the first line is an object by itself, else the whole file's error.
    const std::string_view first_line = text.substr(first, newline == std::string_view::npos ? newline : newline - first);
    if (!one_line && parse_json_value(where, first_line).ok()) return read_json_lines(where, text);
    if (!whole.ok()) return whole.status();
    return unknown_format(where);
  }
  if (has(text, "memory.used")) return read_nvidia_smi_csv(where, text);
  if (has(text, "time (ms) |") || has(text, "Max_MA") || has(text, "MaxMemAllocated=")) return read_deepspeed_log(where, text);
  if (has(text, "max_memory_allocated") || has(text, "max_memory_reserved")) return read_torch_memory_lines(where, text);
  return unknown_format(where);
}

Result<RunMeasurements> read_run_log(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid(path + ": cannot be read (allowed: a readable run log)");
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxRunLogBytes) {
      return Status::invalid(path + ": larger than " + std::to_string(kMaxRunLogBytes >> 20) +
                             " MiB (allowed: a run log up to that size; keep the steps that matter)");
    }
  }
  return read_run_log_text(path, text);
}

}  // namespace spplan::check
