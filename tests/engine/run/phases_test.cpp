// The step's phases (engine/run/step_stats.hpp PhaseTimes): six consecutive phases that add up to the step,
// the loss among them, and two sub-phases inside them. On a GPU each phase ends with the device
// drained; on a CPU the same code runs with nothing to drain.
#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

TEST(EnginePhases, SixPhasesAddUpToTheStepAndTheLossIsOne) {
  const nlohmann::json j = json_of(run_engine({"run", "--model", "tiny-llama", "--seq", "4096", "--sp", "2", "--nproc",
                                               "2", "--steps", "3", "--json"}));
  ASSERT_TRUE(j.is_object());
  const nlohmann::json& p = j.at("phases");
  double sum = 0;
  for (const char* name : {"data_s", "forward_s", "loss_s", "backward_s", "grad_all_reduce_s", "optimizer_s"}) {
    ASSERT_TRUE(p.contains(name)) << name << ": " << p.dump();
    EXPECT_GT(p.at(name).get<double>(), 0.0) << name;
    sum += p.at(name).get<double>();
  }
  const double step = j.at("step_time_s").get<double>();
  EXPECT_NEAR(sum, step, 1e-9 * step);
  // Sub-phases: the all-to-alls run inside forward and backward.
  EXPECT_GT(p.at("all_to_all_s").get<double>(), 0.0);
  EXPECT_LT(p.at("all_to_all_s").get<double>(), p.at("forward_s").get<double>() + p.at("backward_s").get<double>());
  // The head and loss over 4096 vocabulary entries are a real share of tiny-llama's forward.
  EXPECT_GT(p.at("loss_s").get<double>(), 0.05 * p.at("forward_s").get<double>());
}

// --gpu prices the run on the named spec; the comparison line names it on stderr.
TEST(EnginePhases, GpuFlagPricesTheRunAndTheLineSaysSo) {
  const RunResult r = run_engine({"run", "--model", "tiny-llama", "--seq", "1024", "--sp", "1", "--nproc", "1",
                                  "--steps", "2", "--gpu", "h100-80gb", "--json"});
  const nlohmann::json j = json_of(r);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.at("predicted_machine"), "h100-80gb");
  EXPECT_TRUE(j.at("predicted_step_time_s").is_number());
  EXPECT_NE(r.err.find("s predicted ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(on h100-80gb)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace spplan::engine::testing
