// engine/measure/kernel_fit.hpp: the least-squares line calibrate fits to each kernel class.
#include "engine/measure/kernel_fit.hpp"

#include "planner/costmodel/software_facts.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace spplan::engine {
namespace {

// An H100-like bf16 GEMM: 8 us fixed, 700 TFLOP/s; work from 1 GFLOP to 1 PFLOP.
std::vector<KernelSample> gemm_line(double noise_rel, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise_rel, noise_rel);
  std::vector<KernelSample> s;
  for (double w = 1e9; w <= 1e15; w *= 4) s.push_back({w, (8e-6 + w / 700e12) * (1.0 + u(rng))});
  return s;
}

TEST(KernelFit, RecoversAnExactLine) {
  const auto fit = fit_kernel("bf16 GEMM", gemm_line(0.0, 1));
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->fixed_s, 8e-6, 8e-6 * 1e-9);
  EXPECT_NEAR(fit->rate_per_s, 700e12, 700e12 * 1e-9);
  EXPECT_LT(fit->residual_rel_rms, 1e-12);
  EXPECT_FALSE(fit->through_origin);
  EXPECT_EQ(fit->points, 10);  // 1e9 * 4^k for k = 0..9
  // 700 of a 989 TFLOP/s peak; a rate over the peak is the peak.
  EXPECT_NEAR(fit->efficiency(989e12), 700.0 / 989.0, 1e-9);
  EXPECT_DOUBLE_EQ(fit->efficiency(500e12), 1.0);
}

// +-5% uniform noise on every point: relative RMS about 5% / sqrt(3) = 2.9%; the rate (set by the
// large calls) and the fixed part (set by the small ones) within 10%.
TEST(KernelFit, ANoisyLineIsRecoveredWithinItsNoise) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto fit = fit_kernel("bf16 GEMM", gemm_line(0.05, seed));
    ASSERT_TRUE(fit.ok()) << fit.status().message();
    EXPECT_NEAR(fit->rate_per_s, 700e12, 0.10 * 700e12) << "seed " << seed;
    EXPECT_NEAR(fit->fixed_s, 8e-6, 0.10 * 8e-6) << "seed " << seed;
    EXPECT_GT(fit->residual_rel_rms, 0.005) << "seed " << seed;
    EXPECT_LT(fit->residual_rel_rms, 0.05) << "seed " << seed;
  }
}

// Worked by hand: t = w / 100 exactly at w = 50 and 100, and 10% fast at w = 1 (a call that fits in
// a cache) -> the best line's intercept is negative, so the fit goes through the origin instead:
// s = sum(w/t) / sum((w/t)^2) = 311.1 / 32345.7 -> rate 103.97.
TEST(KernelFit, ANegativeInterceptIsRefittedThroughTheOrigin) {
  const auto fit = fit_kernel("copy", {{1.0, 0.009}, {100.0, 1.0}, {50.0, 0.5}});
  ASSERT_TRUE(fit.ok());
  EXPECT_TRUE(fit->through_origin);
  EXPECT_EQ(fit->fixed_s, 0.0);
  EXPECT_NEAR(fit->rate_per_s, 103.97, 0.01);
}

// Time that falls with work (two noisy points): no line through them is physical; the rate alone
// is fitted: s = sum(w/t) / sum((w/t)^2) = (5e11 + 2e12) / (2.5e23 + 4e24) -> rate 1.7e12.
TEST(KernelFit, ATimeThatFallsWithWorkIsFittedAsARateAlone) {
  const auto fit = fit_kernel("attention", {{1e9, 2e-3}, {2e9, 1e-3}});
  ASSERT_TRUE(fit.ok());
  EXPECT_TRUE(fit->through_origin);
  EXPECT_EQ(fit->fixed_s, 0.0);
  EXPECT_NEAR(fit->rate_per_s, 4.25e24 / 2.5e12, 1e6);
  EXPECT_NEAR(fit->residual_rel_rms, 0.514, 0.001);  // the residual says the points are far from any line
}

struct BadCase {
  const char* name;
  std::vector<KernelSample> samples;
  const char* message;
};

TEST(KernelFit, RefusesDegenerateInput) {
  const std::vector<BadCase> cases = {
      {"none", {}, "attention: 0 measurement(s) (allowed: at least 2 sizes to fit time = fixed + work / rate)"},
      {"one point", {{1e9, 1e-3}}, "attention: 1 measurement(s) (allowed: at least 2 sizes"},
      {"zero work", {{0.0, 1e-3}, {1e9, 1e-3}},
       "attention: measurement 0 has work 0 and time 0.001 s (allowed: finite numbers > 0)"},
      {"negative time", {{1e9, 1e-3}, {2e9, -1.0}}, "attention: measurement 1 has work 2e+09 and time -1 s"},
      {"not finite", {{1e9, 1e-3}, {NAN, 1e-3}}, "attention: measurement 1 has work nan"},
      {"one size", {{1e9, 1e-3}, {1e9, 1.1e-3}},
       "attention: every measurement has work 1e+09 (allowed: at least 2 different sizes"},
  };
  for (const BadCase& c : cases) {
    const auto fit = fit_kernel("attention", c.samples);
    ASSERT_FALSE(fit.ok()) << c.name;
    EXPECT_EQ(fit.status().code(), Status::Code::kInvalidInput) << c.name;
    EXPECT_NE(fit.status().message().find(c.message), std::string::npos) << c.name << ": " << fit.status().message();
  }
}

// Sweeps whose forward and backward rates are `rates` in turn (the backward at half the forward),
// counting the sweeps made.
struct ScriptedSweeps {
  std::vector<double> rates;
  int made = 0;
  Result<SweepFits> operator()() {
    const double r = rates.at(static_cast<size_t>(made++));
    SweepFits f;
    f.forward.rate_per_s = r;
    f.backward.rate_per_s = r / 2;
    return f;
  }
};

// One slow sweep (a loaded machine) is outvoted by two that agree; the faster of the
// agreeing pair is kept; with none agreeing, the fastest; at most max_sweeps are made.
// A blockwise causal kernel whose rows each compute 256 keys past their diagonal (half of a
// 512-key tile), at the full calls' line (0.1 ms fixed, 150 GFLOP/s), 8 heads of 32: the extra
// comes back exactly without noise, within its noise with +-3 %, and a causal call that ran
// faster a pair than the line is 0, not negative.
std::vector<ExcessSample> causal_calls(const KernelFit& full, double extra, double noise_rel, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-noise_rel, noise_rel);
  const double pair = 4.0 * 8 * 32;
  std::vector<ExcessSample> out;
  for (double s = 1024; s <= 8192; s *= 2) {
    const double counted = pair * s * s / 2, per_key = pair * s;
    const double t = full.fixed_s + (counted + extra * per_key) / full.rate_per_s;
    out.push_back({{counted, t * (1.0 + u(rng))}, per_key});
  }
  return out;
}

TEST(ExcessUnits, RecoversTheKeysARowOfACausalCallComputesPastItsDiagonal) {
  KernelFit full;
  full.fixed_s = 1e-4, full.rate_per_s = 150e9;
  EXPECT_NEAR(excess_units(full, causal_calls(full, 256, 0.0, 1)), 256.0, 1e-9);
  for (uint32_t seed : {1u, 2u, 3u}) {
    EXPECT_NEAR(excess_units(full, causal_calls(full, 256, 0.03, seed)), 256.0, 0.25 * 256) << "seed " << seed;
  }
  std::vector<ExcessSample> fast = causal_calls(full, 0, 0.0, 1);
  for (ExcessSample& c : fast) c.counted.time_s *= 0.9;
  EXPECT_EQ(excess_units(full, fast), 0.0);
  EXPECT_EQ(excess_units(full, {}), 0.0);
}

// A biased call whose every pair costs 0.15 pairs more (the unit is its own counted work): 0.15 back.
TEST(ExcessUnits, RecoversWhatAPairUnderABiasCostsMore) {
  KernelFit full;
  full.fixed_s = 1e-4, full.rate_per_s = 150e9;
  std::vector<ExcessSample> biased;
  for (double s = 1024; s <= 8192; s *= 2) {
    const double work = 4.0 * 8 * 32 * s * s;
    biased.push_back({{work, full.fixed_s + 1.15 * work / full.rate_per_s}, work});
  }
  EXPECT_NEAR(excess_units(full, biased), 0.15, 1e-12);
}

TEST(AgreedSweep, RepeatsUntilTwoSweepsAgreeAndKeepsTheFasterOfThem) {
  ScriptedSweeps slow_first{{0.7, 1.0, 1.05, 9.0}};
  const auto a = agreed_sweep(3, 0.10, [&] { return slow_first(); });
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->forward.rate_per_s, 1.05);
  EXPECT_DOUBLE_EQ(a->backward.rate_per_s, 0.525);
  EXPECT_TRUE(a->agreed);
  EXPECT_EQ(a->sweeps, 3);
  EXPECT_EQ(slow_first.made, 3);

  ScriptedSweeps steady{{1.0, 0.95, 9.0}};
  const auto b = agreed_sweep(3, 0.10, [&] { return steady(); });
  EXPECT_DOUBLE_EQ(b->forward.rate_per_s, 1.0);
  EXPECT_EQ(b->sweeps, 2);
  EXPECT_EQ(steady.made, 2);

  ScriptedSweeps noisy{{1.0, 0.7, 0.5, 9.0}};
  const auto c = agreed_sweep(3, 0.10, [&] { return noisy(); });
  EXPECT_DOUBLE_EQ(c->forward.rate_per_s, 1.0);
  EXPECT_FALSE(c->agreed);
  EXPECT_EQ(c->sweeps, 3);
  EXPECT_EQ(noisy.made, 3);

  ScriptedSweeps once{{0.5, 9.0}};
  const auto d = agreed_sweep(1, 0.10, [&] { return once(); });
  EXPECT_DOUBLE_EQ(d->forward.rate_per_s, 0.5);
  EXPECT_EQ(once.made, 1);
}

// Both rates must agree: a sweep whose backward alone ran slow is not taken as agreeing.
TEST(AgreedSweep, ForwardAndBackwardMustBothAgreeAndErrorsPassThrough) {
  SweepFits a, b;
  a.forward.rate_per_s = b.forward.rate_per_s = 1.0;
  a.backward.rate_per_s = 1.0;
  b.backward.rate_per_s = 0.8;
  EXPECT_FALSE(fits_agree(a, b, 0.10));
  b.backward.rate_per_s = 0.95;
  EXPECT_TRUE(fits_agree(a, b, 0.10));
  EXPECT_TRUE(faster_sweep(a, b));
  const auto failed = agreed_sweep(3, 0.10, []() -> Result<SweepFits> { return Status::internal("probe broke"); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "probe broke");
}

// calibrate counts an attention backward's FLOPs as the costmodel prices them: its rates are the
// costmodel's efficiencies.
TEST(AttentionTimes, BackwardFlopsAsTheCostmodelCountsThem) {
  EXPECT_EQ(kAttentionBwdOverFwdFlops, costmodel::facts::kAttentionBwdFlopsFactor);
}

}  // namespace
}  // namespace spplan::engine
