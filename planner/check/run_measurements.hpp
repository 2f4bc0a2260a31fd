// RunMeasurements: what one training run's logs say it did, in one shape whatever stack wrote
// them (readers.hpp turns each format into it). Every field is optional: a trainer_state.json has
// no memory, an nvidia-smi log has nothing else; `spplan check` compares what is there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spplan::check {

// Which of the three peaks below a memory number measures.
enum class MemoryMeasure { kNone, kAllocated, kReserved, kDevice };

struct RunMeasurements {
  // The formats read ("hf-trainer-state", "nvidia-smi-csv", ...), one per log, in order.
  std::vector<std::string> formats;
  // Peak memory of the busiest rank, bytes, by what measured it: the framework's allocator
  // (torch.cuda.max_memory_allocated and what reports it), its reserved pool
  // (max_memory_reserved), or the whole device (nvidia-smi's memory.used, CUDA context included).
  std::optional<double> peak_allocated_bytes;
  std::optional<double> peak_reserved_bytes;
  std::optional<double> device_used_bytes;
  // The memory a log sampled over the run, bytes, in the log's order (nvidia-smi's rows, each torch
  // or DeepSpeed memory line, the engine's step lines), and which peak they sample; empty when no
  // log holds a series. The lines rarely say when they were written, so a sample has no time.
  std::vector<double> memory_samples_bytes;
  MemoryMeasure memory_samples_of = MemoryMeasure::kNone;
  // Seconds per optimizer step, each logged step in order (a first step with its warm-up included).
  std::vector<double> step_times_s;
  std::optional<double> tokens_per_s;    // whole run, every rank
  std::optional<double> tokens_seen;     // the logged token count at the last step
  std::optional<int64_t> steps;          // optimizer steps the token count covers
  std::optional<double> tflops_per_gpu;  // as the stack computed it
  std::optional<double> train_loss;      // the last logged training loss
  std::optional<double> eval_loss;       // the last logged evaluation loss
  // What the run says it built (the engine reports it): 0 when the log does not say.
  int64_t sp = 0, cp = 0;
  bool ran_on_cpu = false;  // the engine's report says its device was the CPU
};

// The mean step time leaving out the first step when there are more (its warm-up: kernel
// selection, allocator growth); nullopt when no step was timed.
std::optional<double> steady_step_time_s(const RunMeasurements& run);

// The peak `spplan check` compares with the plan: the allocator's when a log gives it, else the
// device's, else the reserved pool's; kNone when no log gives a peak.
MemoryMeasure compared_memory(const RunMeasurements& run);

// `more` into `*run`: a field `more` has replaces an empty one; peaks take the larger; step times
// from the first log that has any; memory samples from the first log whose samples are of the
// compared peak (compared_memory of the merged run), else from the first that has any.
void merge_into(RunMeasurements* run, const RunMeasurements& more);

}  // namespace spplan::check
