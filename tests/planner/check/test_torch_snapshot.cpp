// read_torch_snapshot on the synthetic snapshots of data/torch_snapshot/ (make_snapshot_fixtures.py
// wrote them in torch 2.15.0's documented shape; no GPU did), at protocols 2, 4 and 5, through the
// format detection; every cut of a snapshot and a table of bad ones refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "planner/check/readers.hpp"
#include "planner/check/run_log.hpp"
#include "tests/planner/check/pickle_bytes.hpp"

namespace spplan::check {
namespace {

using namespace pickle_bytes;  // NOLINT: the byte builder's few names

const std::string kData = std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/check/data/torch_snapshot/";
constexpr double kMiB = 1 << 20;

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TorchSnapshot, SegmentsGiveTheBusiestDevicesReserved) {
  // Device 0: one 20 MiB segment (12 + 2 + 6 MiB blocks). Device 1: 30 + 2 and 1 + 1 MiB, 34 MiB
  // reserved, the busiest. No trace: no allocator peak (31 MiB active at the snapshot is not one).
  const auto run = read_run_log(kData + "segments.pickle");
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->formats, std::vector<std::string>{"torch-memory-snapshot"});
  EXPECT_EQ(run->peak_reserved_bytes, 34 * kMiB);
  EXPECT_FALSE(run->peak_allocated_bytes);
  EXPECT_TRUE(run->memory_samples_bytes.empty());
  EXPECT_EQ(compared_memory(*run), MemoryMeasure::kReserved);
}

TEST(TorchSnapshot, TraceGivesThePeakAndSamplesAtEveryProtocol) {
  // Device 0 at the snapshot: segments 20 + 2 + 6 = 28 MiB, active blocks 4 + 1 + 6 = 11 MiB.
  // Its trace moves allocated by +8 +4 -8 +10 +1 -10 (alloc, free_completed; free_requested and
  // oom move nothing) = +5, so 11 - 5 = 6 MiB was held before it (the 6 MiB segment's block):
  // the levels 14, 18, 10, 20, 21, 11 MiB, peak 21. Reserved: +20 +2 from 6 MiB, 26 then 28.
  // Device 1 (10 MiB reserved, untraced) is less busy.
  const std::vector<double> levels = {14 * kMiB, 18 * kMiB, 10 * kMiB, 20 * kMiB, 21 * kMiB, 11 * kMiB};
  for (const char* name : {"traced.pickle", "traced.p2.pickle", "traced.p5.pickle"}) {
    const auto run = read_run_log(kData + name);
    ASSERT_TRUE(run.ok()) << name << ": " << run.status().message();
    EXPECT_EQ(run->peak_allocated_bytes, 21 * kMiB) << name;
    EXPECT_EQ(run->peak_reserved_bytes, 28 * kMiB) << name;
    EXPECT_EQ(run->memory_samples_bytes, levels) << name;
    EXPECT_EQ(run->memory_samples_of, MemoryMeasure::kAllocated) << name;
  }
}

TEST(TorchSnapshot, EveryCutOfASnapshotIsRefusedInOneLine) {
  const std::string bytes = file_bytes(kData + "traced.pickle");
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t n = 1; n < bytes.size(); ++n) {
    const auto run = read_run_log_text("cut.pickle", std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(run.ok()) << n;
    const std::string& m = run.status().message();
    ASSERT_EQ(m.rfind("cut.pickle: ", 0), 0u) << m;
    ASSERT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(TorchSnapshot, LongTraceIsSampledKeepingItsPeak) {
  // 10,000 events: alloc 1 MiB, free it, ... with one 7 MiB pair at events 5000 and 5001. Kept:
  // the largest of each 3 (ceil(10000 / 4096)), 3334 points; the 7 MiB among them.
  std::vector<std::string> trace;
  for (int i = 0; i < 10'000; ++i) {
    const int32_t size = (i == 5000 || i == 5001) ? 7 << 20 : 1 << 20;
    trace.push_back(dict({{"action", str(i % 2 == 0 ? "alloc" : "free_completed")}, {"size", integer(size)}}));
  }
  const std::string bytes = whole(dict({{"segments", list({})}, {"device_traces", list({list(trace)})}}));
  const auto run = read_torch_snapshot("long.pickle", bytes);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->peak_allocated_bytes, 7 * kMiB);
  EXPECT_FALSE(run->peak_reserved_bytes);  // no segment and no segment event: the pool is not known
  ASSERT_EQ(run->memory_samples_bytes.size(), 3334u);
  EXPECT_EQ(*std::max_element(run->memory_samples_bytes.begin(), run->memory_samples_bytes.end()), 7 * kMiB);
}

TEST(TorchSnapshot, BadSnapshotsAreRefusedInOneLine) {
  const std::string allowed = " (allowed: torch.cuda.memory._dump_snapshot's output)";
  const auto segment = [](const std::string& total) { return dict({{"device", integer(0)}, {"total_size", total}}); };
  const struct {
    std::string name, bytes, message;  // message after "s.pickle: "
  } cases[] = {
      {"int", whole(integer(3)), "a pickle of an int without key \"segments\", not a memory snapshot" + allowed},
      {"other_dict", whole(dict({{"a", integer(1)}})), "a pickle of a dict without key \"segments\", not a memory snapshot" + allowed},
      {"segments_str", whole(dict({{"segments", str("x")}})), "segments: a str, not a list" + allowed},
      {"total_str", whole(dict({{"segments", list({segment(str("1"))})}})), "segments[0]: key \"total_size\": a str, not an int" + allowed},
      {"total_negative", whole(dict({{"segments", list({segment(integer(-1))})}})),
       "segments[0]: key \"total_size\": value -1 is negative" + allowed},
      {"no_total", whole(dict({{"segments", list({dict({{"device", integer(0)}})})}})), "segments[0]: no key \"total_size\"" + allowed},
      {"block_size", whole(dict({{"segments", list({dict({{"total_size", integer(1)}, {"blocks", list({dict({})})}})})}})),
       "segments[0].blocks[0]: no key \"size\"" + allowed},
      {"traces_dict", whole(dict({{"segments", list({})}, {"device_traces", list({dict({})})}})),
       "device_traces[0]: a dict, not a list" + allowed},
      {"alloc_no_size", whole(dict({{"segments", list({})}, {"device_traces", list({list({dict({{"action", str("alloc")}})})})}})),
       "device_traces[0][0]: no key \"size\"" + allowed},
      {"empty", whole(dict({{"segments", list({})}, {"device_traces", list({list({})})}})),
       "a memory snapshot with no segments and no trace events (allowed: a snapshot taken while the process holds CUDA "
       "memory, e.g. after a training step)"},
  };
  for (const auto& c : cases) {
    const auto run = read_run_log_text("s.pickle", c.bytes);
    ASSERT_FALSE(run.ok()) << c.name;
    EXPECT_EQ(run.status().message(), "s.pickle: " + c.message) << c.name;
  }
}

}  // namespace
}  // namespace spplan::check
