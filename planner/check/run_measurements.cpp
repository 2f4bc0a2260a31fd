#include "planner/check/run_measurements.hpp"

#include <algorithm>

namespace spplan::check {
namespace {

void take_larger(std::optional<double>* into, const std::optional<double>& more) {
  if (more && (!*into || *more > **into)) *into = more;
}

template <typename T>
void take_if_empty(std::optional<T>* into, const std::optional<T>& more) {
  if (!*into) *into = more;
}

}  // namespace

std::optional<double> steady_step_time_s(const RunMeasurements& run) {
  const std::vector<double>& t = run.step_times_s;
  if (t.empty()) return std::nullopt;
  const auto first = t.size() > 1 ? t.begin() + 1 : t.begin();
  double sum = 0;
  for (auto it = first; it != t.end(); ++it) sum += *it;
  return sum / static_cast<double>(t.end() - first);
}

MemoryMeasure compared_memory(const RunMeasurements& run) {
  if (run.peak_allocated_bytes) return MemoryMeasure::kAllocated;
  if (run.device_used_bytes) return MemoryMeasure::kDevice;
  if (run.peak_reserved_bytes) return MemoryMeasure::kReserved;
  return MemoryMeasure::kNone;
}

void merge_into(RunMeasurements* run, const RunMeasurements& more) {
  run->formats.insert(run->formats.end(), more.formats.begin(), more.formats.end());
  take_larger(&run->peak_allocated_bytes, more.peak_allocated_bytes);
  take_larger(&run->peak_reserved_bytes, more.peak_reserved_bytes);
  take_larger(&run->device_used_bytes, more.device_used_bytes);
  if (run->step_times_s.empty()) run->step_times_s = more.step_times_s;
  const MemoryMeasure compared = compared_memory(*run);
  if (!more.memory_samples_bytes.empty() &&
      (run->memory_samples_bytes.empty() ||
       (run->memory_samples_of != compared && more.memory_samples_of == compared))) {
    run->memory_samples_bytes = more.memory_samples_bytes;
    run->memory_samples_of = more.memory_samples_of;
  }
  take_if_empty(&run->tokens_per_s, more.tokens_per_s);
  take_if_empty(&run->tokens_seen, more.tokens_seen);
  take_if_empty(&run->steps, more.steps);
  take_if_empty(&run->tflops_per_gpu, more.tflops_per_gpu);
  take_if_empty(&run->train_loss, more.train_loss);
  take_if_empty(&run->eval_loss, more.eval_loss);
  if (run->sp == 0) run->sp = more.sp;
  if (run->cp == 0) run->cp = more.cp;
  run->ran_on_cpu = run->ran_on_cpu || more.ran_on_cpu;
}

}  // namespace spplan::check
