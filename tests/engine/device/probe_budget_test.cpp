// engine/device/probe_budget.hpp: how calibrate sizes a measurement by time. Driven by synthetic timers:
// a "GEMM" whose call takes size^3 / rate seconds.
#include "engine/device/probe_budget.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace spplan::engine {
namespace {

// A cubic kernel at `rate` size^3 per second; records the sizes it was called with.
struct CubicKernel {
  double rate;
  std::vector<int64_t> sizes;
  double operator()(int64_t n) {
    sizes.push_back(n);
    return static_cast<double>(n) * n * n / rate;
  }
};

// A fast machine: 2048^3 / 1e11 = 0.086 s < 0.1 s target, so it grows to the cap and stops there.
TEST(ProbeBudget, AFastMachineIsMeasuredAtTheLargestSize) {
  CubicKernel k{1e11, {}};
  const ProbeTiming t = time_within_budget({64, 2048, 0.1, 3, 1.0}, k);
  EXPECT_EQ(t.size, 2048);
  EXPECT_DOUBLE_EQ(t.best_s, 2048.0 * 2048 * 2048 / 1e11);
  EXPECT_EQ(k.sizes, (std::vector<int64_t>{64, 128, 256, 512, 1024, 2048, 2048, 2048, 2048}));
  EXPECT_EQ(t.calls, 9);
}

// bf16 emulated on AVX2 (3.3e8 FLOP/s = 1.65e8 size^3/s): 256^3 takes 0.10 s, 512^3 would take 0.8 s.
// It stops at the first size past the target and the rate belongs to that size.
TEST(ProbeBudget, ASlowMachineStopsAtTheFirstSizePastTheTarget) {
  CubicKernel k{1.65e8, {}};
  const ProbeTiming t = time_within_budget({64, 2048, 0.1, 3, 1.0}, k);
  EXPECT_EQ(t.size, 256);
  EXPECT_NEAR(t.best_s, 256.0 * 256 * 256 / 1.65e8, 1e-12);
  EXPECT_EQ(k.sizes.back(), 256);
  double total = 0;
  for (int64_t n : k.sizes) total += static_cast<double>(n) * n * n / 1.65e8;
  EXPECT_LT(total, 0.6);  // 2048^3 would have taken 52 s a call
}

// A first size that is already far too slow: no growth, and no repeats past the cap.
TEST(ProbeBudget, RepeatsStopAtTheCap) {
  CubicKernel k{1e3, {}};  // 64^3 / 1e3 = 262 s
  const ProbeTiming t = time_within_budget({64, 2048, 0.1, 3, 1.0}, k);
  EXPECT_EQ(t.size, 64);
  EXPECT_EQ(t.calls, 1);
}

// The best of the calls at the chosen size is kept (the first one warms caches).
TEST(ProbeBudget, KeepsTheShortestCall) {
  std::vector<double> times = {0.5, 0.3, 0.4, 0.2};
  size_t i = 0;
  const ProbeTiming t = time_within_budget({8, 8, 0.0, 3, 10.0}, [&](int64_t) { return times[i++]; });
  EXPECT_EQ(t.size, 8);
  EXPECT_DOUBLE_EQ(t.best_s, 0.2);
  EXPECT_EQ(t.calls, 4);
}

}  // namespace
}  // namespace spplan::engine

namespace spplan::engine {
namespace {

// sweep_within_budget keeps every size. 32^3 / 1e6 = 0.03 s, 64^3 / 1e6 = 0.26 s, 128^3 / 1e6 =
// 2.1 s >= 1 s target: three points; one warm-up call, then each size called 1 + 3 times unless the
// reps pass 5 s (128: 2.1 + 2.1 + 2.1 > 5).
TEST(SweepWithinBudget, KeepsEverySizeUntilTheTarget) {
  CubicKernel k{1e6, {}};
  const std::vector<ProbeTiming> points = sweep_within_budget({32, 4096, 1.0, 3, 5.0}, k);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1].size, 64);
  EXPECT_EQ(points[1].calls, 4);
  EXPECT_DOUBLE_EQ(points[1].best_s, 64.0 * 64 * 64 / 1e6);
  EXPECT_EQ(points[2].size, 128);
  EXPECT_EQ(points[2].calls, 2);
  EXPECT_EQ(k.sizes, (std::vector<int64_t>{32, 32, 32, 32, 32, 64, 64, 64, 64, 128, 128}));
}

// A fast machine stops at last_size, below the target.
TEST(SweepWithinBudget, StopsAtTheLargestSize) {
  CubicKernel k{1e15, {}};
  const std::vector<ProbeTiming> points = sweep_within_budget({256, 2048, 1.0, 0, 1.0}, k);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points.back().size, 2048);
  EXPECT_EQ(k.sizes, (std::vector<int64_t>{256, 256, 512, 1024, 2048}));
}

}  // namespace
}  // namespace spplan::engine

namespace spplan::engine {
namespace {

// A slow machine whose first size is already past the target still gets three sizes.
// 16^3 / 1e2 = 41 s: no reps (cap 1 s); the warm-up call first.
TEST(SweepWithinBudget, TimesThreeSizesEvenWhenTheFirstIsPastTheTarget) {
  CubicKernel k{1e2, {}};
  const std::vector<ProbeTiming> points = sweep_within_budget({16, 4096, 1.0, 3, 1.0}, k);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(k.sizes, (std::vector<int64_t>{16, 16, 32, 64}));
}

}  // namespace
}  // namespace spplan::engine
