// The optimizer settings on real runs: --grad-clip changes the updates, the reported gradient
// norm is the global one (the same for every sp and ZeRO stage), and the learning rates follow
// the schedule (engine/run/lr_schedule.hpp; the formulas are unit-tested in lr_schedule_test.cpp).
#include <cmath>

#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

// tiny-llama at 1024 tokens: a step is well under a second here.
std::vector<std::string> run_args(int nproc, int sp, std::initializer_list<std::string> more) {
  std::vector<std::string> a{"run",    "--model", "tiny-llama", "--seq",  "1024", "--sp", std::to_string(sp), "--nproc",
                             std::to_string(nproc), "--steps", "3", "--seed", "7", "--json"};
  a.insert(a.end(), more);
  return a;
}

std::vector<double> field(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) ? j[key].get<std::vector<double>>() : std::vector<double>{};
}

TEST(EngineOptimizer, GradClipChangesTheUpdatesNotTheFirstLoss) {
  const nlohmann::json plain = json_of(run_engine(run_args(1, 1, {})));
  const nlohmann::json clipped = json_of(run_engine(run_args(1, 1, {"--grad-clip", "1e-3"})));
  const std::vector<double> a = losses_of(plain), b = losses_of(clipped);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(a[0], b[0]);  // the same weights and batch before the first update
  EXPECT_GT(std::abs(a[2] - b[2]) / a[2], 1e-4) << a[2] << " vs " << b[2];
  // The norm of step 1 is taken before clipping: the same in both runs, and far above 1e-3.
  const std::vector<double> na = field(plain, "grad_norms"), nb = field(clipped, "grad_norms");
  ASSERT_EQ(na.size(), 3u);
  ASSERT_EQ(nb.size(), 3u);
  EXPECT_EQ(na[0], nb[0]);
  EXPECT_GT(na[0], 1e-2);
  for (double n : na) EXPECT_TRUE(std::isfinite(n) && n > 0) << n;
  // Defaults: lr 1e-3 constant (the engine's settings before the flags existed).
  EXPECT_EQ(field(plain, "lrs"), (std::vector<double>{1e-3, 1e-3, 1e-3}));
}

// Every gradient element counted once: ZeRO 0 holds the full all-reduced gradient on every rank,
// ZeRO 2/3 a shard each (and with the optimizer offloaded, on the host). Clipping is on, so a
// per-rank norm would also change the second step's loss.
TEST(EngineOptimizer, GradNormIsGlobalForEverySpAndZeroStage) {
  const nlohmann::json base = json_of(run_engine(run_args(1, 1, {"--grad-clip", "0.5"})));
  const std::vector<double> norms = field(base, "grad_norms"), losses = losses_of(base);
  ASSERT_EQ(norms.size(), 3u);
  EXPECT_GT(norms[0], 0.5);  // clipping is active
  const struct {
    int nproc, sp;
    std::vector<std::string> flags;
  } cases[] = {
      {2, 2, {}},
      {2, 2, {"--zero", "2"}},
      {2, 2, {"--zero", "3", "--act-ckpt", "full"}},
      {2, 2, {"--zero", "2", "--offload-optimizer", "cpu"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = run_args(c.nproc, c.sp, {"--grad-clip", "0.5"});
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const nlohmann::json j = json_of(run_engine(args));
    std::string what;
    for (const auto& f : c.flags) what += f + " ";
    EXPECT_LT(max_rel_diff(field(j, "grad_norms"), norms), 1e-5) << "sp " << c.sp << " " << what;
    EXPECT_LT(max_rel_diff(losses_of(j), losses), 1e-5) << "sp " << c.sp << " " << what;
  }
}

TEST(EngineOptimizer, LearningRatesFollowTheScheduleAndShowInProgress) {
  const RunResult r = run_engine(run_args(
      1, 1, {"--lr", "2e-3", "--warmup-steps", "1", "--lr-schedule", "cosine", "--min-lr", "2e-4"}));
  const nlohmann::json j = json_of(r);
  // k = 0: warm-up, 2e-3 * 0/1 = 0; k = 1: p = 0, the peak; k = 2: p = 1/2, 2e-4 + 1.8e-3 / 2 = 1.1e-3.
  const std::vector<double> lrs = field(j, "lrs");
  ASSERT_EQ(lrs.size(), 3u);
  EXPECT_EQ(lrs[0], 0.0);
  EXPECT_NEAR(lrs[1], 2e-3, 1e-15);
  EXPECT_NEAR(lrs[2], 1.1e-3, 1e-15);
  EXPECT_NE(r.err.find("step 3/3  loss "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  lr 0.0011  grad norm "), std::string::npos) << r.err;
  const nlohmann::json lin = json_of(run_engine(run_args(1, 1, {"--lr-schedule", "linear", "--min-lr", "1e-4"})));
  // no warm-up, T = 3: p = 0, 1/3, 2/3: 1e-3, 1e-4 + 9e-4 * 2/3 = 7e-4, 1e-4 + 9e-4 / 3 = 4e-4.
  const std::vector<double> l = field(lin, "lrs");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_NEAR(l[0], 1e-3, 1e-15);
  EXPECT_NEAR(l[1], 7e-4, 1e-15);
  EXPECT_NEAR(l[2], 4e-4, 1e-15);
}

}  // namespace
}  // namespace spplan::engine::testing
