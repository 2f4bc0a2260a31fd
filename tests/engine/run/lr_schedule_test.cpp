// The learning-rate schedule (engine/run/lr_schedule.hpp), pinned to numbers worked by hand.
#include "engine/run/lr_schedule.hpp"

#include <gtest/gtest.h>

namespace spplan::engine {
namespace {

// lr 1e-3, min_lr 1e-4, 2 warm-up steps, 6 steps in all: the warm-up gives 0 and 5e-4 (k / 2 of
// the peak), then p = (k - 2) / 4 = 0, 1/4, 1/2, 3/4 for k = 2..5.
OptimizerSpec spec(LrSchedule schedule) {
  OptimizerSpec o;
  o.lr = 1e-3;
  o.min_lr = 1e-4;
  o.warmup_steps = 2;
  o.lr_schedule = schedule;
  return o;
}

TEST(LrSchedule, CosineWithWarmupAndFloor) {
  // cosine: 1e-4 + 9e-4 (1 + cos(pi p)) / 2; cos(pi/4) = 0.70710678: 0.85355339 -> 8.6819805e-4,
  // 0.5 -> 5.5e-4, 0.14644661 -> 2.3180195e-4.
  const double expected[] = {0, 5e-4, 1e-3, 8.6819805e-4, 5.5e-4, 2.3180195e-4};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(lr_at(spec(LrSchedule::kCosine), k, 6), expected[k], 1e-11) << k;
}

TEST(LrSchedule, LinearWithWarmupAndFloor) {
  // linear: 1e-4 + 9e-4 (1 - p): 1e-3, 7.75e-4, 5.5e-4, 3.25e-4.
  const double expected[] = {0, 5e-4, 1e-3, 7.75e-4, 5.5e-4, 3.25e-4};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(lr_at(spec(LrSchedule::kLinear), k, 6), expected[k], 1e-15) << k;
}

TEST(LrSchedule, ConstantIgnoresTheFloorAndDefaultsAreTodaysEngine) {
  const double expected[] = {0, 5e-4, 1e-3, 1e-3, 1e-3, 1e-3};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(lr_at(spec(LrSchedule::kConstant), k, 6), expected[k]) << k;
  const OptimizerSpec defaults;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(lr_at(defaults, k, 3), 1e-3);  // lr 1e-3, no warm-up, constant
}

TEST(LrSchedule, NoWarmupStartsAtThePeakAndStepsPastTheEndStayAtTheFloor) {
  OptimizerSpec o = spec(LrSchedule::kCosine);
  o.warmup_steps = 0;
  EXPECT_EQ(lr_at(o, 0, 4), 1e-3);
  EXPECT_NEAR(lr_at(o, 2, 4), 5.5e-4, 1e-15);  // p = 1/2
  EXPECT_NEAR(lr_at(o, 4, 4), 1e-4, 1e-15);    // p = 1
  EXPECT_NEAR(lr_at(o, 9, 4), 1e-4, 1e-15);    // clamped, not rising again
  o.lr_schedule = LrSchedule::kLinear;
  EXPECT_NEAR(lr_at(o, 1, 1), 1e-4, 1e-15);    // T - W = 1: p = 1 at k = 1
}

// What "decay to --min-lr at --steps" means, pinned to transformers (5.x) itself: the values
// get_cosine_with_min_lr_schedule_with_warmup(opt, 2, 6, min_lr=1e-4) and
// get_linear_schedule_with_warmup(opt, 2, 6) give the optimizer at steps k = 0..6 (printed by the
// venv's transformers). The scheduler is stepped after each optimizer step, so the last of 6 steps
// (k = 5) trains at 2.318e-4 and min_lr is the rate *after* it (k = 6 = --steps), not the rate of
// the last step: the engine matches that, and the README says so.
TEST(LrSchedule, MatchesTransformersIncludingTheLastStep) {
  const double cosine[] = {0, 5e-4, 1e-3, 8.681980515e-4, 5.5e-4, 2.318019485e-4, 1e-4};
  const double linear[] = {0, 5e-4, 1e-3, 7.5e-4, 5e-4, 2.5e-4, 0};  // transformers' linear ends at 0: min_lr 0
  OptimizerSpec lin = spec(LrSchedule::kLinear);
  lin.min_lr = 0;
  for (int k = 0; k <= 6; ++k) {
    EXPECT_NEAR(lr_at(spec(LrSchedule::kCosine), k, 6), cosine[k], 1e-12) << k;
    EXPECT_NEAR(lr_at(lin, k, 6), linear[k], 1e-15) << k;
  }
}

}  // namespace
}  // namespace spplan::engine
