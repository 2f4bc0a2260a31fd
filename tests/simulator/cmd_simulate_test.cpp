// `spplan simulate` end to end: a plan file written by plan_to_toml(), then the command's output.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/config/loaders.hpp"
#include "tests/simulator/plan_fixtures.hpp"

int cmd_simulate(int argc, const char* const* argv);

namespace spplan::sim {
namespace {

namespace fs = std::filesystem;

class CmdSimulate : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("spplan-sim-test-") + test->name());
    fs::create_directories(dir_);
    plan_path_ = (dir_ / "plan.toml").string();
    PlanSpec p = testing::make_plan(testing::llama_8b(), 8, 64 * 1024, 8);
    ASSERT_TRUE(write_file_atomically(plan_path_, plan_to_toml(p)).is_ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  int run(std::vector<std::string> args, std::string* out, std::string* err) {
    std::vector<const char*> argv = {"simulate"};
    for (const auto& a : args) argv.push_back(a.c_str());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = cmd_simulate(static_cast<int>(argv.size()), argv.data());
    *out = ::testing::internal::GetCapturedStdout();
    *err = ::testing::internal::GetCapturedStderr();
    return code;
  }

  fs::path dir_;
  std::string plan_path_;
};

TEST_F(CmdSimulate, JsonHasTheContractFields) {
  std::string out, err;
  ASSERT_EQ(run({"--plan", plan_path_, "--json", "--events", "5"}, &out, &err), 0) << err;
  const auto j = nlohmann::json::parse(out);
  for (const char* key : {"step_time_s", "serial_step_time_s", "exposed_comm_s", "peak_memory_gib", "events"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"a2a", "zero", "offload"}) EXPECT_TRUE(j["exposed_comm_s"].contains(key)) << key;
  EXPECT_EQ(j["events"]["first"].size(), 5u);
  EXPECT_GT(j["events"]["count"].get<size_t>(), 5u);
  EXPECT_LE(j["step_time_s"].get<double>(), j["serial_step_time_s"].get<double>());
}

// A plan of a million micro steps answers at once, and says which it folded, in the JSON, the table,
// the trace and the picture.
TEST_F(CmdSimulate, AMillionMicroStepsAreFoldedAndSaidSo) {
  PlanSpec p = testing::make_plan(testing::llama_8b(), 8, 64 * 1024, 8);
  p.knobs.grad_accum_steps = 1'000'000;
  ASSERT_TRUE(write_file_atomically(plan_path_, plan_to_toml(p)).is_ok());
  const std::string trace = (dir_ / "t.json").string(), svg = (dir_ / "t.svg").string();
  std::string out, err;
  ASSERT_EQ(run({"--plan", plan_path_, "--json", "--trace", trace, "--svg", svg}, &out, &err), 0) << err;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["folded_micro_steps"]["count"], 999'997);
  EXPECT_EQ(j["folded_micro_steps"]["same_as"], 1);
  const std::string said = j["folded_micro_steps"]["text"].get<std::string>();
  EXPECT_EQ(said.rfind("micro steps m2..m999998 (999,997 of 1,000,000) are the same as m1", 0), 0u) << said;
  for (const std::string& path : {trace, svg}) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    EXPECT_NE(text.str().find(said), std::string::npos) << path;
  }
  ASSERT_EQ(run({"--plan", plan_path_}, &out, &err), 0) << err;
  EXPECT_NE(out.find("\n  " + said + "\n"), std::string::npos) << out;
}

TEST_F(CmdSimulate, NoOverlapJsonStepIsTheSerialTime) {
  std::string out, err;
  ASSERT_EQ(run({"--plan", plan_path_, "--json", "--no-overlap"}, &out, &err), 0) << err;
  const auto j = nlohmann::json::parse(out);
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), j["serial_step_time_s"].get<double>());
}

TEST_F(CmdSimulate, WritesTraceAndSvg) {
  const std::string trace = (dir_ / "t.json").string(), svg = (dir_ / "t.svg").string();
  std::string out, err;
  ASSERT_EQ(run({"--plan", plan_path_, "--trace", trace, "--svg", svg}, &out, &err), 0) << err;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  EXPECT_FALSE(j["traceEvents"].empty());
  EXPECT_TRUE(fs::exists(svg));
  EXPECT_NE(out.find("step time"), std::string::npos);
}

// Bad input: one line on stderr, exit 2.
TEST_F(CmdSimulate, BadInputIsOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {},                                              // --plan missing
      {"--plan", (dir_ / "missing.toml").string()},    // no such file
      {"--plan", plan_path_, "--frobnicate"},          // unknown flag
      {"--plan", plan_path_, "--events", "-3"},        // negative count
      {"--plan", plan_path_, "--trace", (dir_ / "no/such/dir/t.json").string()},
  };
  for (const auto& args : bad) {
    std::string out, err;
    EXPECT_EQ(run(args, &out, &err), 2);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace spplan::sim
