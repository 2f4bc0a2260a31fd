// A user's runs file: rows appended beside the GPU file, read back by the band.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "planner/check/run_log.hpp"
#include "planner/check/user_runs.hpp"
#include "planner/config/loaders.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::check {
namespace {

using spplan::testing_scratch::ScratchDir;

TEST(UserRuns, TheRunsFileSitsBesideTheGpuFile) {
  EXPECT_EQ(runs_file_beside("gpus/my-h100.toml"), "gpus/my-h100.runs.json");
  EXPECT_EQ(runs_file_beside("my-h100.toml"), "my-h100.runs.json");
  EXPECT_EQ(runs_file_beside("my-h100"), "my-h100.runs.json");
}

TEST(UserRuns, EachCheckedRunIsARowTheBandCounts) {
  const ScratchDir dir("user_runs");
  const std::string data = SPPLAN_TEST_DATA_DIR;
  auto plan = load_plan(data + "/gpu/h100-2026-11-26/q06-16k.plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto run = read_run_log(data + "/gpu/h100-2026-11-26/q06-16k.json");
  ASSERT_TRUE(run.ok()) << run.status().message();
  const CheckReport report = check_run(*plan, *run, Band{});
  const nlohmann::json row = run_row(*plan, report, {"q06-16k.json"});
  EXPECT_EQ(row["gpu"], "h100-80gb");
  EXPECT_EQ(row["trainer"], "engine");
  ASSERT_TRUE(row.contains("memory") && row.contains("step_time_s"));
  const std::string runs = dir.path() + "/my-h100.runs.json";
  ASSERT_TRUE(append_run(runs, row).is_ok());
  ASSERT_TRUE(append_run(runs, row).is_ok());
  auto band = band_for(*plan, {runs});
  ASSERT_TRUE(band.ok()) << band.status().message();
  EXPECT_EQ(band->your_memory.count, 2);
  EXPECT_EQ(band->your_speed.count, 2);
  auto shipped = band_for(*plan, {});
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(band->memory.count, shipped->memory.count + 2);  // yours counted among all
  EXPECT_EQ(shipped->your_memory.count, 0);
}

TEST(UserRuns, AFileThatIsNotARunsFileIsRefusedAndLeftAsItWas) {
  const ScratchDir dir("user_runs_bad");
  const std::string path = dir.path() + "/notes.runs.json";
  std::ofstream(path) << "{\"rows\": [{\"trainer\": \"hf\"}]}";
  const Status s = append_run(path, nlohmann::json{{"gpu", "h100-80gb"}});
  EXPECT_EQ(s.message(), path + ": key \"rows[0].gpu\": missing (allowed: a GPU preset name; regenerate with "
                                "scripts/validation-results.sh)");
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{\"rows\": [{\"trainer\": \"hf\"}]}");
}

}  // namespace
}  // namespace spplan::check
