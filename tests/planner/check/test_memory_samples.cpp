// RunMeasurements' memory samples: each reader that logs memory more than once keeps every number
// in the log's order with the peak it samples, and merge_into keeps the samples of the peak the
// check compares.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/check/readers.hpp"
#include "planner/check/run_log.hpp"
#include "planner/core/units.hpp"

namespace spplan::check {
namespace {

RunMeasurements read_ok(Result<RunMeasurements> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : RunMeasurements{};
}

TEST(MemorySamples, NvidiaSmiKeepsEveryRow) {
  const std::string log =
      "timestamp, index, memory.used [MiB]\n"
      "2026/11/30 10:00:00.000, 0, 1024 MiB\n"
      "2026/11/30 10:00:01.000, 0, 44335 MiB\n"
      "2026/11/30 10:00:02.000, 0, 44000 MiB\n";
  const RunMeasurements run = read_ok(read_nvidia_smi_csv("smi.csv", log));
  EXPECT_EQ(run.memory_samples_bytes, (std::vector<double>{1024 * kMiB, 44335 * kMiB, 44000 * kMiB}));
  EXPECT_EQ(run.memory_samples_of, MemoryMeasure::kDevice);
}

TEST(MemorySamples, TorchLinesSampleTheAllocatorElseTheReservedPool) {
  const RunMeasurements both = read_ok(read_torch_memory_lines(
      "mem.log", "max_memory_allocated: 1000\nmax_memory_reserved: 4000\nmax_memory_allocated: 3000\n"));
  EXPECT_EQ(both.memory_samples_bytes, (std::vector<double>{1000, 3000}));
  EXPECT_EQ(both.memory_samples_of, MemoryMeasure::kAllocated);
  const RunMeasurements reserved =
      read_ok(read_torch_memory_lines("mem.log", "max_memory_reserved: 4000\nmax_memory_reserved: 5000\n"));
  EXPECT_EQ(reserved.memory_samples_bytes, (std::vector<double>{4000, 5000}));
  EXPECT_EQ(reserved.memory_samples_of, MemoryMeasure::kReserved);
}

TEST(MemorySamples, DeepSpeedMemoryLinesInOrder) {
  const std::string log =
      "MA 1 GB Max_MA 2 GB CA 3 GB Max_CA 4 GB\n"
      "time (ms) | fwd: 100.00 | bwd: 200.00 | step: 100.00\n"
      "MA 1 GB Max_MA 5 GB CA 3 GB Max_CA 6 GB\n"
      "CurrSamplesPerSec=1.6, MemAllocated=1GB, MaxMemAllocated=4GB\n";
  const RunMeasurements run = read_ok(read_deepspeed_log("ds.log", log));
  EXPECT_EQ(run.memory_samples_bytes, (std::vector<double>{2 * kGiB, 5 * kGiB, 4 * kGiB}));
  EXPECT_EQ(run.memory_samples_of, MemoryMeasure::kAllocated);
  const RunMeasurements timers = read_ok(read_deepspeed_log("ds.log", "time (ms) | fwd: 1 | bwd: 2 | step: 3\n"));
  EXPECT_TRUE(timers.memory_samples_bytes.empty());
  EXPECT_EQ(timers.memory_samples_of, MemoryMeasure::kNone);
}

TEST(MemorySamples, EngineLogStepLines) {
  std::vector<nlohmann::json> lines = {
      {{"event", "step"}, {"step", 1}, {"step_time_s", 1.5}, {"peak_memory_bytes", 300}},
      {{"event", "step"}, {"step", 2}, {"step_time_s", 1.0}, {"peak_memory_bytes", 350}},
      {{"event", "summary"}, {"peak_memory_bytes", 350}, {"sp", 2}}};
  const RunMeasurements run = read_ok(read_engine_log("run.log.jsonl", lines));
  EXPECT_EQ(run.memory_samples_bytes, (std::vector<double>{300, 350}));
  EXPECT_EQ(run.memory_samples_of, MemoryMeasure::kAllocated);
}

TEST(MemorySamples, OnePeakIsNoSeries) {
  // A real run's trainer_state.json (no memory) and engine report (one peak).
  for (const char* log : {"/hf_sp2/trainer_state.json", "/engine_sp2.json"}) {
    const RunMeasurements run = read_ok(read_run_log(std::string(SPPLAN_TEST_DATA_DIR) + log));
    EXPECT_TRUE(run.memory_samples_bytes.empty()) << log;
  }
}

TEST(MemorySamples, MergeKeepsTheSamplesOfTheComparedPeak) {
  RunMeasurements device;
  device.device_used_bytes = 50;
  device.memory_samples_bytes = {40, 50};
  device.memory_samples_of = MemoryMeasure::kDevice;
  RunMeasurements allocated;
  allocated.peak_allocated_bytes = 30;
  allocated.memory_samples_bytes = {20, 30};
  allocated.memory_samples_of = MemoryMeasure::kAllocated;
  // The check compares the allocator's peak once a log gives it: its samples replace the device's.
  RunMeasurements run;
  merge_into(&run, device);
  merge_into(&run, allocated);
  EXPECT_EQ(compared_memory(run), MemoryMeasure::kAllocated);
  EXPECT_EQ(run.memory_samples_bytes, allocated.memory_samples_bytes);
  EXPECT_EQ(run.memory_samples_of, MemoryMeasure::kAllocated);
  // In the other order the allocator's stay.
  RunMeasurements other;
  merge_into(&other, allocated);
  merge_into(&other, device);
  EXPECT_EQ(other.memory_samples_bytes, allocated.memory_samples_bytes);
  // Of the same peak, the first log's.
  RunMeasurements twice;
  RunMeasurements later = allocated;
  later.memory_samples_bytes = {1};
  merge_into(&twice, allocated);
  merge_into(&twice, later);
  EXPECT_EQ(twice.memory_samples_bytes, allocated.memory_samples_bytes);
}

TEST(MemorySamples, ComparedMemoryPrefersTheAllocatorThenTheDevice) {
  RunMeasurements run;
  EXPECT_EQ(compared_memory(run), MemoryMeasure::kNone);
  run.peak_reserved_bytes = 1;
  EXPECT_EQ(compared_memory(run), MemoryMeasure::kReserved);
  run.device_used_bytes = 1;
  EXPECT_EQ(compared_memory(run), MemoryMeasure::kDevice);
  run.peak_allocated_bytes = 1;
  EXPECT_EQ(compared_memory(run), MemoryMeasure::kAllocated);
}

}  // namespace
}  // namespace spplan::check
