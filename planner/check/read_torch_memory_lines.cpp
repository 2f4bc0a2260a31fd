// Lines a script prints from torch.cuda.max_memory_allocated() and torch.cuda.max_memory_reserved()
// (torch/cuda/memory.py: bytes, the largest since the process started or reset_peak_memory_stats).
// No library fixes their wording, so a line counts when it names the function and a number follows:
// "max_memory_allocated: 40554006016", "torch.cuda.max_memory_reserved() = 42.5 GiB",
// "rank 3 max_memory_allocated=37.8GB". Every rank's lines may be in the file: the largest counts.
#include "planner/check/readers.hpp"
#include "planner/check/text_scan.hpp"

namespace spplan::check {
namespace {

// Bytes of the number after `key` in `line`, with its unit.
std::optional<double> bytes_after(std::string_view line, std::string_view key) {
  std::string_view rest;
  const auto v = number_after(line, key, &rest);
  if (!v || *v < 0) return std::nullopt;
  return *v * unit_bytes(rest);
}

// The larger into `*into`, and every value into `*samples`.
void take_max(std::optional<double>* into, std::optional<double> v, std::vector<double>* samples) {
  if (!v) return;
  samples->push_back(*v);
  if (!*into || *v > **into) *into = v;
}

}  // namespace

Result<RunMeasurements> read_torch_memory_lines(const std::string& where, std::string_view text) {
  RunMeasurements run;
  run.formats = {"torch-max-memory"};
  std::vector<double> allocated, reserved;
  for (std::string_view line : text_lines(text)) {
    take_max(&run.peak_allocated_bytes, bytes_after(line, "max_memory_allocated"), &allocated);
    take_max(&run.peak_reserved_bytes, bytes_after(line, "max_memory_reserved"), &reserved);
  }
  // The samples of the peak check compares: the allocator's when the lines give it.
  const bool by_allocated = !allocated.empty();
  run.memory_samples_bytes = by_allocated ? allocated : reserved;
  run.memory_samples_of = by_allocated ? MemoryMeasure::kAllocated : MemoryMeasure::kReserved;
  if (!run.peak_allocated_bytes && !run.peak_reserved_bytes) {
    return Status::invalid(where + ": no number after max_memory_allocated or max_memory_reserved (allowed: lines "
                           "such as \"max_memory_allocated: 40554006016\" or \"max_memory_reserved = 42.5 GiB\")");
  }
  return run;
}

}  // namespace spplan::check
