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
  std::optional<search::RankedPlan> best;
  if (args->has("sp")) {
    if (Status s = apply_knob_flags(*args, &base->knobs); !s) return fail(s);
    base->seq_len = granularity;
    if (Status s = check_plan(*base, flag_where); !s) return fail(s);
    base->seq_len = search::max_seq_fixed(*base, granularity);
    if (base->seq_len > 0) best = search::RankedPlan{*base, costmodel::estimate(*base)};
  } else {
    best = search::max_seq_searched(*base, granularity);
  }
  const int64_t max_seq = best ? best->plan.seq_len : 0;
  if (args->has("json")) {
    nlohmann::json j{{"max_seq", max_seq}};
    if (best) j["plan"] = estimate_json(best->plan, best->estimate);
    std::cout << j.dump(2) << "\n";
  } else if (best) {
    std::cout << "max_seq: " << max_seq << " tokens (" << max_seq / 1024 << "k)\n"
              << estimate_text(best->plan, best->estimate);
  } else {
    std::cout << "max_seq: 0 (not even " << granularity << " tokens fit)\n";
  }
  return kExitOk;
}

}  // namespace spplan::cli
