// spplan fit --model M --gpu G --gpus N --seq S [--json]: exit 0 when some plan fits, 1 when none
// does (then the smallest GPU count of that GPU that fits), 2 on bad input.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {
namespace {

// Searching beyond this many GPUs is no longer a "rent a few more" answer.
constexpr int64_t kMaxSuggestedGpus = 4096;

}  // namespace

int cmd_fit(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, with(cluster_flag_specs(true), {{"json", false}}));
  if (!args.ok()) return fail(args.status());
  auto base = plan_from_flags(*args, true);
  if (!base.ok()) return fail(base.status());
  const search::SearchResult result = search::search_plans(*base, false);
  const bool fits = !result.feasible.empty();
  std::optional<int64_t> needed;
  if (!fits) needed = search::smallest_fitting_gpus(*base, kMaxSuggestedGpus);
  if (args->has("json")) {
    nlohmann::json j{{"fits", fits}, {"feasible_plans", result.feasible.size()}};
    if (fits) j["best"] = estimate_json(result.feasible.front().plan, result.feasible.front().estimate);
    j["smallest_gpus_that_fit"] = fits ? nlohmann::json(base->cluster.num_gpus)
                                       : (needed ? nlohmann::json(*needed) : nlohmann::json(nullptr));
    std::cout << j.dump(2) << "\n";
  } else if (fits) {
    const auto& best = result.feasible.front();
    std::cout << "fits: yes (" << result.feasible.size() << " plans; best " << knobs_text(best.plan.knobs) << ", "
              << static_cast<long long>(best.estimate.tokens_per_s) << " tokens/s)\n";
  } else {
    std::cout << "fits: no on " << base->cluster.num_gpus << "x " << base->cluster.gpu.name << "; ";
    if (needed) {
      std::cout << "the smallest count that fits is " << *needed << " GPUs\n";
    } else {
      std::cout << "nothing up to " << kMaxSuggestedGpus << " GPUs fits\n";
    }
  }
  return fits ? kExitOk : kExitNoFit;
}

}  // namespace spplan::cli
