// read_run_log: the format told from the content, and every bad file refused in one line.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "planner/check/run_log.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::check {
namespace {

using spplan::testing_scratch::ScratchDir;

std::string write(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(RunLog, EachFormatIsToldFromItsContent) {
  const ScratchDir dir("run_log_formats");
  const struct {
    std::string name, text, format;
  } cases[] = {
      {"trainer_state.json", "{\n  \"log_history\": [\n    {\"loss\": 1.0, \"step\": 1}\n  ]\n}\n", "hf-trainer-state"},
      {"report.json", "{\"losses\": [1.0], \"peak_memory_bytes\": 5}\n", "spplan-run-json"},
      {"run.jsonl", "{\"event\": \"step\", \"step\": 1, \"step_time_s\": 1.0}\n", "spplan-run-log"},
      {"two.jsonl", "{\"event\": \"step\", \"step\": 1}\n{\"event\": \"step\", \"step\": 2}\n", "spplan-run-log"},
      {"metrics.jsonl", "{\"iter\": 1, \"iter_time\": 2.0}\n{\"iter\": 2, \"iter_time\": 2.0}\n", "arctic-metrics"},
      {"ds.log", "[Rank 0] time (ms) | fwd: 1.00 | bwd: 2.00 | step: 3.00\n", "deepspeed-log"},
      {"mem.log", "max_memory_allocated: 100\n", "torch-max-memory"},
      {"smi.csv", "memory.used [MiB]\n100 MiB\n", "nvidia-smi-csv"},
  };
  for (const auto& c : cases) {
    const auto run = read_run_log(write(dir, c.name, c.text));
    ASSERT_TRUE(run.ok()) << c.name << ": " << run.status().message();
    EXPECT_EQ(run->formats, std::vector<std::string>{c.format}) << c.name;
  }
}

TEST(RunLog, BadFilesAreRefusedInOneLineNamingTheFile) {
  const ScratchDir dir("run_log_bad");
  const std::string formats = std::string(" (allowed: ") + kRunLogFormats + ")";
  const struct {
    std::string name, text, message;  // message after "<path>: "
  } cases[] = {
      {"empty.log", "", "empty" + formats},
      {"blank.log", " \n\n", "empty" + formats},
      {"notes.txt", "loss went down\n", "not a run log spplan reads" + formats},
      {"other.json", "{\"hello\": 1}\n", "not a run log spplan reads" + formats},
      {"lines.jsonl", "{\"a\": 1}\n{\"b\": 2}\n", "not a run log spplan reads" + formats},
      {"snapshot.pickle", std::string("\x80\x04\x95", 3) + "rest",  // a pickle, cut inside its FRAME's length
       "byte 2: truncated: the opcode needs 8 more bytes, 4 are left (allowed: a whole pickle)"},
      {"a.out", std::string("\x7f" "ELF\x02\x01\x01\x00", 8) + "rest", "a binary file, not a run log" + formats},
      {"cut.json", "{\n  \"log_history\": [\n", "not valid JSON at byte 22 (allowed: a JSON log)"},
      {"cut.jsonl", "{\"iter\": 1}\n{\"iter\": \n", "line 2: not valid JSON at byte 10 (allowed: a JSON log)"},
      {"array.jsonl", "{\"iter\": 1}\n[1]\n", "line 2: a JSON array (allowed: one JSON object a line)"},
      {"deep.json", "{\"a\": " + std::string(100, '['), "objects and arrays nested more than 64 deep (allowed: at most 64 levels)"},
      {"no_history.json", "{\"log_history\": 3}", "key \"log_history\": missing or not an array (allowed: a trainer_state.json the HF Trainer wrote)"},
      {"history.json", "{\"log_history\": [1]}", "key \"log_history[0]\": not an object (allowed: a trainer_state.json the HF Trainer wrote)"},
      {"event.jsonl", "{\"event\": \"step\"}\n{\"step\": 2}\n", "line 2: key \"event\": missing (allowed: step, eval, checkpoint, summary)"},
      {"iter.jsonl", "{\"iter\": 1}\n{\"iter\": \"x\"}\n", "line 2: key \"iter\": missing or not a number (allowed: ArcticTraining's metrics lines)"},
      {"times.json", "{\"losses\": [], \"peak_memory_bytes\": 1, \"step_times_s\": [-1]}",
       "key \"step_times_s\": an entry that is not a positive number (allowed: seconds)"},
      {"ds.log", "time (ms) | fwd_microstep: 1.0\n",
       "a DeepSpeed log without a timer line (\"time (ms) | fwd: .. | bwd: .. | step: ..\") or a memory line "
       "(\"Max_MA .. GB\") (allowed: a log of a run with wall_clock_breakdown or memory_breakdown on)"},
      {"mem.log", "max_memory_allocated: n/a\n",
       "no number after max_memory_allocated or max_memory_reserved (allowed: lines such as "
       "\"max_memory_allocated: 40554006016\" or \"max_memory_reserved = 42.5 GiB\")"},
      {"smi1.csv", "1024 MiB\nmemory.used [MiB]\n", "line 1: a row before the header (allowed: --format=csv with its header)"},
      {"smi2.csv", "index, memory.used [MiB]\n0\n", "line 2: 1 fields, memory.used is field 2 (allowed: the header's fields on every row)"},
      {"smi3.csv", "memory.used [MiB]\n[N/A]\n", "line 2: memory.used \"[N/A]\" is not a number (allowed: \"40123 MiB\" or 40123)"},
      {"smi4.csv", "memory.used [MiB]\n", "a header and no rows (allowed: at least one sample)"},
  };
  for (const auto& c : cases) {
    const std::string path = write(dir, c.name, c.text);
    const auto run = read_run_log(path);
    ASSERT_FALSE(run.ok()) << c.name;
    EXPECT_EQ(run.status().message(), path + ": " + c.message) << c.name;
  }
}

TEST(RunLog, WhatIsNotAFileIsRefusedBeforeReading) {
  const ScratchDir dir("run_log_not_files");
  EXPECT_EQ(read_run_log(dir.path() + "/absent.log").status().message(), dir.path() + "/absent.log: cannot open (no such file)");
  const auto folder = read_run_log(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().message().find('\n'), std::string::npos);
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(read_run_log(fifo).ok());  // a pipe would block: refused, not read
  const std::string device = dir.path() + "/null";
  if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    EXPECT_FALSE(read_run_log(device).ok());  // a device never ends
  }
}

}  // namespace
}  // namespace spplan::check
