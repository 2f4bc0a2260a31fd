// spplan max-seq --model M --gpu G --gpus N [--sp P knobs] [--granularity T] [--json]
// With --sp the knobs are fixed; without, every knob set is searched.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {

namespace {

// The longest sequence of `plan`'s knobs (fixed) or of any knobs (searched).
std::optional<search::RankedPlan> longest(PlanSpec plan, bool fixed, int64_t granularity) {
  if (!fixed) return search::max_seq_searched(plan, granularity);
  plan.seq_len = search::max_seq_fixed(plan, granularity);
  if (plan.seq_len == 0) return std::nullopt;
  return search::RankedPlan{plan, costmodel::estimate(plan)};
}

}  // namespace

int cmd_max_seq(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv,
                          with(with(cluster_flag_specs(false), knob_flag_specs()), {{"granularity"}, {"json", false}}));
  if (!args.ok()) return fail(args.status());
  auto base = plan_from_flags(*args, false);
  if (!base.ok()) return fail(base.status());
  int64_t granularity = 1024;  // report lengths in whole k-tokens
  if (auto v = args->get("granularity")) {
    auto parsed = parse_seq_len("--granularity", *v);
    if (!parsed.ok()) return fail(parsed.status());
    granularity = *parsed;
  }
  if (granularity > search::kMaxSearchedSeqLen) {  // the answer would be 0 whatever fits
    return fail(Status::invalid("--granularity: value " + std::to_string(granularity) +
                                " is above the longest sequence searched (allowed: at most " +
                                std::to_string(search::kMaxSearchedSeqLen) + " tokens)"));
  }
  if (has_knob_flags(*args) && !args->has("sp")) {
    return fail(Status::invalid("--sp: missing (required when knobs are fixed; omit all knobs to search them)"));
  }
  const bool fixed = args->has("sp");
  if (fixed) {
    if (Status s = apply_knob_flags(*args, &base->knobs); !s) return fail(s);
    base->seq_len = granularity;
    if (Status s = check_plan(*base, flag_where); !s) return fail(s);
  }
  // The answer keeps the allocator slack allowance (the safe side); the same search without it is
  // the most that could run when the allocator leaves nothing stranded: the margin, stated.
  const std::optional<search::RankedPlan> best = longest(*base, fixed, granularity);
  PlanSpec no_slack = *base;
  no_slack.cluster.gpu.allocator_fragmentation = 0.0;
  const std::optional<search::RankedPlan> upper = longest(no_slack, fixed, granularity);
  const int64_t max_seq = best ? best->plan.seq_len : 0, upper_seq = upper ? upper->plan.seq_len : 0;
  const double slack_pct = 100.0 * base->cluster.gpu.allocator_fragmentation;
  if (args->has("json")) {
    nlohmann::json j{{"max_seq", max_seq}, {"max_seq_without_allocator_slack", upper_seq},
                     {"allocator_fragmentation", base->cluster.gpu.allocator_fragmentation}};
    if (best) j["plan"] = estimate_json(best->plan, best->estimate);
    std::cout << j.dump(2) << "\n";
  } else if (best) {
    std::cout << "max_seq: " << max_seq << " tokens (" << max_seq / 1024 << "k)\n"
              << "margin: counts " << format_number(slack_pct)
              << "% allocator slack on the memory freed within a step; without it " << upper_seq << " tokens ("
              << upper_seq / 1024 << "k) is the most that can run\n"
              << estimate_text(best->plan, best->estimate);
  } else {
    std::cout << "max_seq: 0 (not even " << granularity << " tokens fit)\n";
  }
  return kExitOk;
}

}  // namespace spplan::cli
