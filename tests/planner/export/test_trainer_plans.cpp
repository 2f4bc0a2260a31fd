// A property: for every trainer, every plan that `plan`, `fit` and `max-seq` return exports
// to at least one of the trainer's launching formats (a plan is what its stack runs). Random
// (model, GPU, count, sequence) cases from a fixed seed: the same cases on every run.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/export/export.hpp"
#include "planner/search/search.hpp"

namespace spplan {
namespace {

constexpr uint64_t kSeed = 20261127;
constexpr int kCasesPerTrainer = 10;

// The launching formats that export the plan ("" when none does), with the first refusal met.
std::vector<std::string> launching_exports(const PlanSpec& plan, std::string* why) {
  std::vector<std::string> ok;
  for (const FormatRecord& f : plan.stack.record->formats) {
    if (f.component) continue;
    const auto format = parse_export_format(f.name);
    const auto text = export_plan(plan, *format);
    if (text.ok()) {
      ok.push_back(f.name);
    } else if (why->empty()) {
      *why = f.name + ": " + text.status().message();
    }
  }
  return ok;
}

std::string describe(const PlanSpec& p) {
  return p.stack.trainer + " " + p.model.name + " on " + std::to_string(p.cluster.num_gpus) + "x " +
         p.cluster.gpu.name + " at " + std::to_string(p.seq_len) + " sp " + std::to_string(p.knobs.sp) + " cp " +
         std::to_string(p.knobs.cp) + " zero " + std::to_string(p.knobs.zero_stage) + " mb " +
         std::to_string(p.knobs.micro_batch) + " ga " + std::to_string(p.knobs.grad_accum_steps);
}

void expect_launches(const PlanSpec& plan) {
  std::string why;
  EXPECT_FALSE(launching_exports(plan, &why).empty()) << describe(plan) << ": " << why;
}

TEST(TrainerPlans, EveryPlanTheSearchesReturnExportsToOneOfItsTrainersFormats) {
  std::mt19937_64 rng(kSeed);
  const std::vector<std::string> models{"qwen3-4b", "llama-3.1-8b", "qwen2.5-7b", "qwen3-32b", "llama-3.1-70b", "qwen3-0.6b"};
  const std::vector<std::string> gpus{"h100-80gb", "a100-80gb", "h200-141gb"};
  const std::vector<int64_t> counts{1, 2, 4, 8, 16, 32};
  const std::vector<int64_t> seqs{16384, 65536, 131072, 524288, 1 << 20, 4 << 20};
  auto pick = [&](const auto& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  int plans_checked = 0;
  for (const std::string& trainer : trainer_names()) {
    for (int i = 0; i < kCasesPerTrainer; ++i) {
      PlanSpec base;
      base.model = *load_model(pick(models));
      base.cluster.gpu = *load_gpu(pick(gpus));
      base.cluster.num_gpus = pick(counts);
      base.seq_len = pick(seqs);
      base.stack = *load_trainer(trainer);
      const search::SearchResult r = search::search_plans(base, false);
      for (size_t k = 0; k < r.feasible.size() && k < 3; ++k, ++plans_checked) expect_launches(r.feasible[k].plan);
      if (const auto longest = search::max_seq_searched(base, 1024)) {
        expect_launches(longest->plan);
        ++plans_checked;
      }
      if (const auto gpus_needed = search::smallest_fitting_gpus(base, 64)) {
        PlanSpec at = base;
        at.cluster.num_gpus = *gpus_needed;
        const search::SearchResult fit = search::search_plans(at, false);
        ASSERT_FALSE(fit.feasible.empty()) << describe(at);
        expect_launches(fit.feasible.front().plan);
        ++plans_checked;
      }
    }
  }
  EXPECT_GT(plans_checked, 100);  // the property was exercised, not vacuous
}

}  // namespace
}  // namespace spplan
