// A DeepSpeed run's log, as deepspeed 0.18.9 prints it:
//  - wall_clock_breakdown: SynchronizedWallClockTimer.log (utils/timer.py) prints
//    "time (ms) | fwd: 12.34 | bwd: 56.78 | bwd_inner: .. | bwd_allreduce: .. | step: 9.10" for the
//    step's global timers (the *_microstep timers print lines of their own, skipped here); the
//    step is fwd + bwd + step, as the engine's own _autotuning_exit adds them (runtime/engine.py);
//  - see_memory_usage (runtime/utils.py): "MA 1.2 GB Max_MA 3.4 GB CA 5.6 GB Max_CA 7 GB", the
//    allocator's numbers divided by 1024^3 though printed "GB";
//  - ThroughputTimer (utils/timer.py): "..., MemAllocated=1.2GB, MaxMemAllocated=3.4GB", the same units.
// Lines may carry a logger prefix ("[2026-..] [INFO] [logging.py:107:log_dist] [Rank 0] "): keys
// are searched anywhere in a line.
#include "planner/check/readers.hpp"
#include "planner/check/text_scan.hpp"
#include "planner/core/units.hpp"

namespace spplan::check {
namespace {

// The larger into `*into`, and every value into `*samples`.
void take_max(std::optional<double>* into, std::optional<double> v, std::vector<double>* samples) {
  if (!v || *v < 0) return;
  samples->push_back(*v);
  if (!*into || *v > **into) *into = v;
}

// The step of a timer line: fwd + bwd + step, in seconds; nullopt when it is a microstep line or
// lacks one of the three.
std::optional<double> timer_step_s(std::string_view line) {
  if (line.find("_microstep") != std::string_view::npos) return std::nullopt;
  const size_t at = line.find("time (ms)");
  const std::string_view timers = line.substr(at);
  const auto fwd = number_after(timers, "| fwd:");
  const auto bwd = number_after(timers, "| bwd:");
  const auto step = number_after(timers, "| step:");
  if (!fwd || !bwd || !step) return std::nullopt;
  return (*fwd + *bwd + *step) / 1000.0;
}

}  // namespace

Result<RunMeasurements> read_deepspeed_log(const std::string& where, std::string_view text) {
  RunMeasurements run;
  run.formats = {"deepspeed-log"};
  std::vector<double> allocated, reserved;
  for (std::string_view line : text_lines(text)) {
    if (line.find("time (ms)") != std::string_view::npos) {
      if (auto s = timer_step_s(line); s && *s > 0) run.step_times_s.push_back(*s);
    }
    if (line.find("Max_MA") != std::string_view::npos) {
      std::optional<double> max_ma = number_after(line, "Max_MA");
      std::optional<double> max_ca = number_after(line, "Max_CA");
      take_max(&run.peak_allocated_bytes, max_ma ? std::optional<double>(*max_ma * kGiB) : std::nullopt, &allocated);
      take_max(&run.peak_reserved_bytes, max_ca ? std::optional<double>(*max_ca * kGiB) : std::nullopt, &reserved);
    }
    if (auto max_alloc = number_after(line, "MaxMemAllocated=")) {
      take_max(&run.peak_allocated_bytes, *max_alloc * kGiB, &allocated);
    }
  }
  // The samples of the peak check compares: the allocator's when the lines give it.
  const bool by_allocated = !allocated.empty();
  run.memory_samples_bytes = by_allocated ? allocated : reserved;
  run.memory_samples_of = run.memory_samples_bytes.empty() ? MemoryMeasure::kNone
                          : by_allocated                   ? MemoryMeasure::kAllocated
                                                           : MemoryMeasure::kReserved;
  if (run.step_times_s.empty() && !run.peak_allocated_bytes && !run.peak_reserved_bytes) {
    return Status::invalid(where + ": a DeepSpeed log without a timer line (\"time (ms) | fwd: .. | bwd: .. | step: ..\") "
                           "or a memory line (\"Max_MA .. GB\") (allowed: a log of a run with wall_clock_breakdown "
                           "or memory_breakdown on)");
  }
  return run;
}

}  // namespace spplan::check
