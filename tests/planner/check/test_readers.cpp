// Each reader on the lines its stack prints (readers.hpp names the release each was read from).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "planner/check/json_text.hpp"
#include "planner/check/readers.hpp"
#include "planner/core/units.hpp"

namespace spplan::check {
namespace {

RunMeasurements lines_of(Result<RunMeasurements> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : RunMeasurements{};
}

TEST(DeepSpeedLog, TimersAndMemoryLinesWithTheLoggersPrefix) {
  // deepspeed 0.18.9: utils/timer.py's "time (ms)" lines (a microstep line beside the global one),
  // runtime/utils.py see_memory_usage, ThroughputTimer's MaxMemAllocated.
  const std::string log =
      "[2026-11-30 10:00:01,000] [INFO] [logging.py:107:log_dist] [Rank 0] time (ms) | fwd_microstep: 100.00 | "
      "bwd_microstep: 200.00 | step_microstep: 10.00\n"
      "[2026-11-30 10:00:01,000] [INFO] [logging.py:107:log_dist] [Rank 0] time (ms) | fwd: 120.00 | bwd: 240.00 | "
      "bwd_inner: 200.00 | bwd_allreduce: 40.00 | step: 40.00\n"
      "[Rank 0] time (ms) | fwd: 100.00 | bwd: 200.00 | step: 100.00\n"
      "after forward\n"
      "MA 12.5 GB         Max_MA 36.66 GB         CA 40.1 GB         Max_CA 50 GB \n"
      "epoch=0/micro_step=2/global_step=2, RunningAvgSamplesPerSec=1.5, CurrSamplesPerSec=1.6, MemAllocated=12.1GB, "
      "MaxMemAllocated=37.0GB\n";
  const RunMeasurements run = lines_of(read_deepspeed_log("ds.log", log));
  ASSERT_EQ(run.step_times_s.size(), 2u);
  EXPECT_DOUBLE_EQ(run.step_times_s[0], 0.4);  // 120 + 240 + 40 ms
  EXPECT_DOUBLE_EQ(run.step_times_s[1], 0.4);
  EXPECT_DOUBLE_EQ(*run.peak_allocated_bytes, 37.0 * kGiB);  // the larger of Max_MA and MaxMemAllocated
  EXPECT_DOUBLE_EQ(*run.peak_reserved_bytes, 50 * kGiB);
}

TEST(TorchMemoryLines, EachWordingAndUnitAndTheLargestOverRanks) {
  const std::string log =
      "rank 0 max_memory_allocated: 40554006016\n"
      "rank 1 torch.cuda.max_memory_allocated() = 37.5 GiB\n"
      "rank 0 max_memory_reserved=45684359168 bytes\n"
      "rank 1 max_memory_reserved: 42000 MiB\n";
  const RunMeasurements run = lines_of(read_torch_memory_lines("mem.log", log));
  EXPECT_DOUBLE_EQ(*run.peak_allocated_bytes, 40554006016.0);
  EXPECT_DOUBLE_EQ(*run.peak_reserved_bytes, 45684359168.0);
  const RunMeasurements gb = lines_of(read_torch_memory_lines("gb.log", "max_memory_allocated = 40.5GB\n"));
  EXPECT_DOUBLE_EQ(*gb.peak_allocated_bytes, 40.5e9);  // GB decimal, GiB binary, as written
}

TEST(NvidiaSmiCsv, TheColumnOfMemoryUsedAcrossSamplesAndGpus) {
  const std::string log =
      "timestamp, index, memory.used [MiB], utilization.gpu [%]\n"
      "2026/11/30 10:00:00.000, 0, 1024 MiB, 0 %\n"
      "2026/11/30 10:00:00.000, 1, 44335 MiB, 97 %\n"
      "2026/11/30 10:00:01.000, 0, 44000 MiB, 95 %\n";
  EXPECT_DOUBLE_EQ(*lines_of(read_nvidia_smi_csv("smi.csv", log)).device_used_bytes, 44335 * kMiB);
  const std::string nounits = "memory.used [MiB]\n512\n2048\n";
  EXPECT_DOUBLE_EQ(*lines_of(read_nvidia_smi_csv("smi.csv", nounits)).device_used_bytes, 2048 * kMiB);
}

TEST(ArcticMetrics, IterTimeLossesAndTflops) {
  // arctic_training 0.8.0 metrics.py summary_dict, one line per logged step.
  auto lines = parse_json_lines("m.jsonl",
                                "{\"epoch\": 0, \"iter\": 1, \"lr\": 1e-05, \"loss\": 2.5, \"iter_time\": 9.0, "
                                "\"iter_tflops\": 300.0, \"seqlen\": 65536}\n"
                                "{\"epoch\": 0, \"iter\": 2, \"lr\": 1e-05, \"loss\": 2.4, \"iter_time\": 4.0, "
                                "\"iter_tflops\": 410.5, \"seqlen\": 65536, \"loss/eval\": 2.6}\n");
  ASSERT_TRUE(lines.ok()) << lines.status().message();
  const RunMeasurements run = lines_of(read_arctic_metrics("m.jsonl", *lines));
  EXPECT_EQ(run.step_times_s, (std::vector<double>{9.0, 4.0}));
  EXPECT_DOUBLE_EQ(*run.train_loss, 2.4);
  EXPECT_DOUBLE_EQ(*run.eval_loss, 2.6);
  EXPECT_DOUBLE_EQ(*run.tflops_per_gpu, 410.5);
}

TEST(HfTrainerState, TokensRuntimeEvalAndTheMemoryTrackersDeltas) {
  // transformers 5.24.0: Trainer.log entries; the train metrics with skip_memory_metrics=False.
  auto state = parse_json_value("trainer_state.json", R"({"global_step": 4, "log_history": [
      {"loss": 2.0, "num_input_tokens_seen": 1024, "step": 2, "train_runtime": 1.0},
      {"eval_loss": 2.2, "step": 4},
      {"loss": NaN, "num_input_tokens_seen": 2048, "step": 4, "train_runtime": 2.0, "train_tokens_per_second": 1024.0},
      {"init_mem_gpu_alloc_delta": 1000, "train_mem_gpu_alloc_delta": 200, "train_mem_gpu_peaked_delta": 30,
       "train_runtime": 2.2, "train_loss": 2.0, "step": 4}]})");
  ASSERT_TRUE(state.ok()) << state.status().message();
  const RunMeasurements run = lines_of(read_hf_trainer_state("trainer_state.json", *state));
  EXPECT_DOUBLE_EQ(*run.tokens_seen, 2048);
  EXPECT_EQ(*run.steps, 4);
  EXPECT_DOUBLE_EQ(*run.train_loss, 2.0);  // the NaN (Python's json writes it) is no value
  EXPECT_DOUBLE_EQ(*run.eval_loss, 2.2);
  EXPECT_DOUBLE_EQ(*run.tokens_per_s, 1024.0);
  EXPECT_EQ(run.step_times_s, (std::vector<double>{2.2 / 4}));
  EXPECT_DOUBLE_EQ(*run.peak_allocated_bytes, 1230);
}

TEST(HfTrainerState, AStepBeyondAnyRunsIsNoCount) {
  // 1e300 steps once reached a cast to int64_t (undefined behaviour; fuzz/regressions/run_log).
  for (const char* step : {"1e300", "-3", "0.5"}) {
    auto state = parse_json_value("s.json", std::string(R"({"log_history": [{"num_input_tokens_seen": 512, "step": )") + step +
                                                 R"(, "train_runtime": 2.0}]})");
    ASSERT_TRUE(state.ok()) << state.status().message();
    const RunMeasurements run = lines_of(read_hf_trainer_state("s.json", *state));
    EXPECT_FALSE(run.steps.has_value()) << step;
    EXPECT_TRUE(run.step_times_s.empty()) << step;
  }
}

TEST(EngineLog, StepEventsAndTheSummary) {
  auto lines = parse_json_lines("run.jsonl",
                                "{\"event\": \"step\", \"step\": 1, \"loss\": 8.3, \"step_time_s\": 4.0, \"peak_memory_bytes\": 100}\n"
                                "{\"event\": \"step\", \"step\": 2, \"loss\": 8.2, \"step_time_s\": 2.0, \"peak_memory_bytes\": 300}\n"
                                "{\"event\": \"eval\", \"step\": 2, \"eval_loss\": 8.4}\n"
                                "{\"event\": \"summary\", \"losses\": [8.3, 8.2], \"peak_memory_bytes\": 300, \"sp\": 2, "
                                "\"cp\": 1, \"device\": \"cpu\", \"step_times_s\": [4.0, 2.0], \"tokens_per_s\": 900}\n");
  ASSERT_TRUE(lines.ok()) << lines.status().message();
  const RunMeasurements run = lines_of(read_engine_log("run.jsonl", *lines));
  EXPECT_EQ(run.step_times_s, (std::vector<double>{4.0, 2.0}));
  EXPECT_DOUBLE_EQ(*steady_step_time_s(run), 2.0);  // the first step's warm-up left out
  EXPECT_DOUBLE_EQ(*run.peak_allocated_bytes, 300);
  EXPECT_DOUBLE_EQ(*run.eval_loss, 8.4);
  EXPECT_EQ(run.sp, 2);
  EXPECT_TRUE(run.ran_on_cpu);
}

}  // namespace
}  // namespace spplan::check
