// Out of device memory: one line per rank that ran out, `"oom": true` in the one JSON object, exit
// 3 (not 1: "does not fit" is not a crash). On a CPU the device is emulated by a limit on the
// counting allocator (SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT), which throws what CUDA's allocator throws.
#include <gtest/gtest.h>

#include <sstream>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

RunResult run_limited(const std::string& limit_bytes) {
  return run_engine({"run", "--model", "tiny-llama", "--seq", "4096", "--sp", "2", "--nproc", "2", "--steps", "2",
                     "--json"},
                    {{"SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT", limit_bytes}});
}

size_t lines_with(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
  return n;
}

// tiny-llama at 4K over 2 ranks peaks near 190 MiB a rank: 64 MiB cannot hold it.
TEST(EngineOom, ARunPastTheDeviceExits3WithOneObjectAndOneLinePerRank) {
  const RunResult r = run_limited(std::to_string(64 << 20));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // One object on stdout, however many ranks ran out.
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.at("oom"), true);
  EXPECT_TRUE(j.at("rank") == 0 || j.at("rank") == 1);
  const int64_t tried = j.at("tried_bytes"), in_use = j.at("in_use_bytes"), capacity = j.at("capacity_bytes");
  EXPECT_EQ(capacity, 64 << 20);
  EXPECT_GT(tried, 0);
  EXPECT_GT(in_use + tried, capacity);  // the request that did not fit
  const size_t said = lines_with(r.err, "out of device memory: tried to allocate");
  EXPECT_GE(said, 1u) << r.err;
  EXPECT_LE(said, 2u) << r.err;
  EXPECT_EQ(lines_with(r.err, "stopping the other"), 0u) << "the launcher adds nothing to the rank's line";
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos);
}

TEST(EngineOom, ALimitAboveThePeakChangesNothing) {
  const RunResult r = run_limited(std::to_string(int64_t{8} << 30));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json_of(r).contains("oom"));
}

TEST(EngineOom, ABadLimitIsBadInput) {
  const RunResult r = run_limited("lots");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("environment variable SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT: value \"lots\""), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace spplan::engine::testing
