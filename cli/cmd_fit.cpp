// spplan fit --model M --gpu G --gpus N --seq S [knobs to fix] [--json]: exit 0 when some plan
// fits, 1 when none does, 2 on bad input; either way the smallest GPU count of that GPU that fits.
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/constraints.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {
namespace {

// Searching beyond this many GPUs is no longer a "rent a few more" answer.
constexpr int64_t kMaxSuggestedGpus = 4096;


// Why more GPUs stop helping: sp is bounded by the heads, and data parallelism adds sequences, not
// room for a longer one. "sp is at most 32 (the 32 attention heads of llama-3.1-8b)".
std::string head_bound(const PlanSpec& plan, int64_t max_gpus) {
  const std::vector<int64_t> sp = valid_sp_degrees(plan.model, max_gpus);
  return "sp is at most " + std::to_string(sp.empty() ? 1 : sp.back()) + " (the " +
         std::to_string(plan.model.num_attention_heads) + " attention heads and " +
         std::to_string(plan.model.num_key_value_heads) + " kv heads of " + plan.model.name +
         "), and GPUs beyond the sp group add data parallelism, which does not shorten the sequence per GPU";
}
}  // namespace

std::vector<FlagSpec> fit_flag_specs() {
  return with(with(cluster_flag_specs(true), searched_knob_flag_specs()), {json_flag_spec()});
}

int cmd_fit(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, fit_flag_specs());
  if (!args.ok()) return fail(args.status());
  auto base = plan_from_flags(*args, true);
  if (!base.ok()) return fail(base.status());
  const auto constraints = read_constraints(*args, &*base);
  if (!constraints.ok()) return fail(constraints.status());
  const search::SearchResult result = search::search_plans(*base, false, *constraints);
  const bool fits = !result.feasible.empty();
  // Fitting or not, the answer names the smallest count: on fewer GPUs the same run costs less.
  const std::optional<int64_t> needed =
      search::smallest_fitting_gpus(*base, fits ? base->cluster.num_gpus : kMaxSuggestedGpus, *constraints);
  if (args->has("json")) {
    nlohmann::json j{{"fits", fits}, {"feasible_plans", result.feasible.size()}};
    if (fits) j["best"] = estimate_json(result.feasible.front().plan, result.feasible.front().estimate);
    j["smallest_gpus_that_fit"] = needed ? nlohmann::json(*needed) : nlohmann::json(nullptr);
    if (!needed) j["why_no_count_fits"] = head_bound(*base, kMaxSuggestedGpus);
    std::cout << j.dump(2) << "\n";
  } else if (fits) {
    const auto& best = result.feasible.front();
    std::cout << "fits: yes (" << result.feasible.size() << " plans; best " << knobs_text(best.plan.knobs) << ", "
              << static_cast<long long>(best.estimate.tokens_per_s) << " tokens/s)\n";
    if (needed && *needed < base->cluster.num_gpus) {
      std::cout << "the smallest count that fits is " << *needed << " GPUs\n";
    }
  } else {
    std::cout << "fits: no on " << base->cluster.num_gpus << "x " << base->cluster.gpu.name << "; ";
    if (needed) {
      std::cout << "the smallest count that fits is " << *needed << " GPUs\n";
    } else {
      std::cout << "nothing up to " << kMaxSuggestedGpus << " GPUs fits: " << head_bound(*base, kMaxSuggestedGpus)
                << "\n";
    }
  }
  return fits ? kExitOk : kExitNoFit;
}

}  // namespace spplan::cli
