// Safe first: every plan that leaves more GPU memory free than the largest memory error measured for
// its trainer on its GPU (the verdict "fits") ranks above every plan inside that error, unless the
// ranking is by speed alone (--risky); with nothing measured, a stated default headroom holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/loaders.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/search.hpp"
#include "tests/planner/search/ranked_plans.hpp"

namespace spplan::search {
namespace {

using testing_ranked::ranked;

// A plan of `tokens_per_s` that leaves `free_pct` of the device free, held against `error_pct`.
RankedPlan plan_at(double tokens_per_s, double free_pct, double error_pct) { return ranked(tokens_per_s, free_pct, error_pct); }

std::vector<double> speeds(const std::vector<RankedPlan>& plans) {
  std::vector<double> out;
  for (const auto& p : plans) out.push_back(p.estimate.tokens_per_s);
  return out;
}

TEST(SafeFirst, EverySafePlanRanksBeforeEveryRiskyOne) {
  // A 10% error: 3% and 8% free are risky, 20% and 30% safe, however slow.
  std::vector<RankedPlan> plans{plan_at(2000, 3, 10), plan_at(500, 30, 10), plan_at(1500, 8, 10), plan_at(900, 20, 10)};
  rank_plans(&plans);
  EXPECT_EQ(speeds(plans), (std::vector<double>{900, 500, 2000, 1500}));
  EXPECT_STREQ(group_name(plans[0]), "safe");
  EXPECT_STREQ(group_name(plans[2]), "risky");
  rank_plans(&plans, Ranking::kSpeedOnly);  // --risky: today's order
  EXPECT_EQ(speeds(plans), (std::vector<double>{2000, 1500, 900, 500}));
}

// A trainer and GPU nobody measured: the default headroom draws the line, not "nothing to fear".
TEST(SafeFirst, WithNothingMeasuredTheDefaultHeadroomDrawsTheLine) {
  EXPECT_DOUBLE_EQ(safe_margin_pct(plan_at(1, 50, 0).plan), kUnmeasuredHeadroomPct);
  EXPECT_DOUBLE_EQ(safe_margin_pct(plan_at(1, 50, 4.5).plan), 4.5);
  EXPECT_FALSE(is_safe(plan_at(1000, kUnmeasuredHeadroomPct - 1, 0)));
  EXPECT_FALSE(is_safe(plan_at(1000, kUnmeasuredHeadroomPct, 0)));  // exactly the margin: inside
  EXPECT_TRUE(is_safe(plan_at(1000, kUnmeasuredHeadroomPct + 1, 0)));
  std::vector<RankedPlan> plans{plan_at(1000, 5, 0), plan_at(700, 40, 0)};
  rank_plans(&plans);
  EXPECT_EQ(speeds(plans), (std::vector<double>{700, 1000}));
}

TEST(SafeFirst, TheFastestRiskyPlanIsShownOnlyWhenItIsFaster) {
  std::vector<RankedPlan> plans{plan_at(900, 20, 10), plan_at(1200, 3, 10), plan_at(1000, 5, 10)};
  rank_plans(&plans);
  const RankedPlan* risky = fastest_risky_beyond_best_safe(plans);
  ASSERT_NE(risky, nullptr);
  EXPECT_DOUBLE_EQ(risky->estimate.tokens_per_s, 1200);
  plans = {plan_at(900, 20, 10), plan_at(800, 3, 10)};  // the risky plan is slower: nothing to show
  EXPECT_EQ(fastest_risky_beyond_best_safe(plans), nullptr);
  plans = {plan_at(900, 2, 10), plan_at(800, 3, 10)};  // no safe plan to show it beside
  EXPECT_EQ(fastest_risky_beyond_best_safe(plans), nullptr);
}

// Why this layout says when the other layout's best is risky: it ranks after the safe plans for
// that, not for its speed.
TEST(SafeFirst, WhyThisLayoutSaysARivalIsRisky) {
  SearchResult r;
  r.feasible = {plan_at(900, 30, 10), plan_at(1500, 2, 10)};
  for (RankedPlan& p : r.feasible) {
    p.plan.cluster.gpu = *load_gpu("h100-80gb");
    p.plan.cluster.num_gpus = 4;
  }
  r.feasible[0].plan.knobs.sp = 4;  // Ulysses, safe
  r.feasible[1].plan.knobs.cp = 4;  // a ring, faster and risky
  rank_plans(&r.feasible);
  EXPECT_NE(layout_reason(r).find("ring only: best 1500 tokens/s (sp 1, cp 4), risky: none leaves more GPU memory free "
                                  "than the measured error, so it ranks after the safe plans"),
            std::string::npos)
      << layout_reason(r);
}

// The property: on 200 random (model, GPU, count, sequence, trainer) cases whose trainer and GPU
// have a measured memory error on record, row 1 has the verdict "fits" whenever any plan has it,
// and by speed alone the plans keep today's order (tokens/s never rise past the noise band).
TEST(SafeFirst, RowOneFitsBeyondTheErrorWheneverAnyPlanDoes) {
  const Result<MeasuredAccuracy> accuracy = MeasuredAccuracy::load_dir(MeasuredAccuracy::default_dir());
  ASSERT_TRUE(accuracy.ok()) << accuracy.status().message();
  const std::vector<std::string> models{"qwen3-0.6b", "qwen3-4b", "qwen3-8b", "llama-3.1-8b", "mistral-7b",
                                        "qwen3-14b",  "qwen3-32b", "llama-3.1-70b"};
  const std::vector<int64_t> counts{1, 2, 4, 8, 16};
  // Every (GPU, trainer) pair with a measured error on record, the GPU's own rows included.
  std::vector<std::pair<std::string, std::string>> stacks;
  for (const std::string& gpu : accuracy->gpus()) {
    for (const std::string& trainer : trainer_presets()) {
      std::string scope;
      if (accuracy->memory_error(gpu, trainer, &scope).count > 0) stacks.emplace_back(gpu, trainer);
    }
  }
  ASSERT_FALSE(stacks.empty());
  std::mt19937_64 rng(20261202);  // fixed: the same 200 cases every run
  // The raw engine's numbers (fixed by the standard), not a distribution's (left to the library).
  const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int cases = 0, with_a_safe_plan = 0, with_a_risky_row_one_by_speed = 0;
  while (cases < 200) {
    PlanSpec p;
    const auto& [gpu, trainer] = stacks[pick(stacks.size())];
    p.model = *load_model(models[pick(models.size())]);
    p.cluster.gpu = *load_gpu(gpu);
    p.stack = *load_trainer(trainer);
    p.cluster.num_gpus = counts[pick(counts.size())];
    if (p.cluster.num_gpus > p.cluster.gpu.gpus_per_node) continue;  // whole nodes only, as the CLI checks
    p.seq_len = int64_t{8192} << pick(8);  // 8K to 1M
    hold_against_measured(&p, &*accuracy);
    ++cases;
    KnobConstraints risky;
    risky.ranking = Ranking::kSpeedOnly;
    const SearchResult safe_first = search_plans(p, false);
    const SearchResult by_speed = search_plans(p, false, risky);
    ASSERT_EQ(safe_first.feasible.size(), by_speed.feasible.size());
    if (safe_first.feasible.empty()) continue;
    const auto verdict = [&](const RankedPlan& r) { return plan_verdict(r.plan, r.estimate, &*accuracy).verdict; };
    bool any_fits = false;
    for (const auto& r : safe_first.feasible) any_fits = any_fits || verdict(r) == Verdict::kFits;
    const std::string what = p.model.name + " on " + std::to_string(p.cluster.num_gpus) + "x " + gpu + ", " + trainer +
                             ", seq " + std::to_string(p.seq_len);
    if (any_fits) {
      ++with_a_safe_plan;
      EXPECT_EQ(verdict(safe_first.feasible.front()), Verdict::kFits) << what;
      if (verdict(by_speed.feasible.front()) != Verdict::kFits) ++with_a_risky_row_one_by_speed;
    }
    for (size_t i = 1; i < by_speed.feasible.size(); ++i) {
      EXPECT_LE(by_speed.feasible[i].estimate.tokens_per_s,
                by_speed.feasible[i - 1].estimate.tokens_per_s / (1.0 - kRankNoiseBand) * (1 + 1e-12))
          << what;
    }
  }
  EXPECT_GT(with_a_safe_plan, 50);  // the cases do reach plans beyond the error
  EXPECT_GT(with_a_risky_row_one_by_speed, 0) << "no case where speed alone puts a risky plan first";
}

}  // namespace
}  // namespace spplan::search
