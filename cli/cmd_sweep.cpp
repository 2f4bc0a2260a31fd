// spplan sweep --model M --gpu G --gpus N [--seq-from A --seq-to B] [--csv|--json]
// For each degree a sequence is split over (Ulysses' sp; the ring's cp on a trainer that runs no
// Ulysses) and each sequence length (doubling from A to B): the best plan with that degree, its
// peak memory and throughput, or that nothing fits.
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/core/units.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/knob_constraints.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {
namespace {

struct SweepRow {
  int64_t degree, seq;
  std::optional<search::RankedPlan> best;
};

// What the rows vary: Ulysses' sp (the best plan of each may add a ring), or, on a trainer that runs
// a ring and no Ulysses (Axolotl, TorchTitan), the ring's cp: rows of an sp it never runs would
// all say that nothing fits.
struct SweepAxis {
  std::string name;  // "sp" or "cp": the first column and the JSON key
  std::vector<int64_t> degrees;
};
SweepAxis sweep_axis(const PlanSpec& base) {
  const auto runs = [&](Layout l) { return base.stack.record->layouts[static_cast<size_t>(l)].runs; };
  if (runs(Layout::kUlysses) || runs(Layout::kUlyssesRing) || !runs(Layout::kRing)) {
    return {"sp", valid_sp_degrees(base.model, base.cluster.num_gpus)};
  }
  return {"cp", valid_cp_degrees(base.cluster.num_gpus, 1)};
}

// The best plan of that degree: search_plans ranks best first, so the first feasible one.
std::optional<search::RankedPlan> best_with(const search::SearchResult& searched, const SweepAxis& axis,
                                            int64_t degree) {
  for (const search::RankedPlan& r : searched.feasible) {
    if ((axis.name == "sp" ? r.plan.knobs.sp : r.plan.knobs.cp) == degree) return r;
  }
  return std::nullopt;
}

}  // namespace

std::vector<FlagSpec> sweep_flag_specs() {
  return with(cluster_flag_specs(false),
              {{"seq-from", true, "the shortest sequence, in tokens; lengths double from here", kSeqAllowed, "8k"},
               {"seq-to", true, "the longest sequence, in tokens", kSeqAllowed, "1M"},
               {"csv", false, "print comma-separated values instead of the table"},
               json_flag_spec()});
}

int cmd_sweep(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, sweep_flag_specs());
  if (!args.ok()) return fail(args.status());
  if (args->has("csv") && args->has("json")) {
    return fail(Status::invalid("--csv: not allowed with --json (allowed: one output format)"));
  }
  auto base = plan_from_flags(*args, false);
  if (!base.ok()) return fail(base.status());
  auto from = parse_seq_len("--seq-from", args->get("seq-from").value_or("8k"));
  if (!from.ok()) return fail(from.status());
  auto to = parse_seq_len("--seq-to", args->get("seq-to").value_or("1M"));
  if (!to.ok()) return fail(to.status());
  if (*to < *from) return fail(Status::invalid("--seq-to: value " + std::to_string(*to) + " is below --seq-from " +
                                               std::to_string(*from) + " (allowed: >= --seq-from)"));
  // The searching commands' reader: a named kernel stays named, and what the trainer refuses
  // whatever the rows vary is said once (axolotl of a mixture), not as "no" on every row.
  const auto constraints = search::read_constraints(*args, &*base);
  if (!constraints.ok()) return fail(constraints.status());
  std::vector<std::pair<int64_t, search::SearchResult>> by_seq;  // one search per sequence length
  for (int64_t seq = *from; seq <= *to; seq *= 2) {
    base->seq_len = seq;
    by_seq.emplace_back(seq, search::search_plans(*base, false, *constraints));
  }
  const SweepAxis axis = sweep_axis(*base);
  std::vector<SweepRow> rows;
  for (int64_t degree : axis.degrees) {
    for (const auto& [seq, searched] : by_seq) rows.push_back({degree, seq, best_with(searched, axis, degree)});
  }
  if (args->has("json")) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
      out.push_back({{axis.name, r.degree}, {"seq", r.seq}, {"fits", r.best.has_value()},
                     {"best", r.best ? estimate_json(r.best->plan, r.best->estimate) : nlohmann::json(nullptr)}});
    }
    print_json(nlohmann::json{{"rows", out}});
    return kExitOk;
  }
  const bool csv = args->has("csv");
  std::printf(csv ? "%s,seq,fits,memory_gib,tokens_per_s,step_time_s,knobs\n"
                  : "%-4s %10s %5s %9s %12s %10s  %s\n",
              axis.name.c_str(), "seq", "fits", "mem GiB", "tokens/s", "step s", "best knobs");
  for (const auto& r : rows) {
    const double mem = r.best ? r.best->estimate.memory.needed_bytes() / kGiB : 0.0;  // what fits is judged on
    const double tps = r.best ? r.best->estimate.tokens_per_s : 0.0;
    const double step = r.best ? r.best->estimate.time.step_time_s : 0.0;
    const std::string knobs = r.best ? knobs_text(r.best->plan.knobs) : "-";
    if (!r.best && !csv) {  // nothing fits: no memory, speed or step to show (the CSV keeps its zeros)
      std::printf("%-4lld %10lld %5s %9s %12s %10s  %s\n", static_cast<long long>(r.degree), static_cast<long long>(r.seq),
                  "no", "-", "-", "-", knobs.c_str());
      continue;
    }
    std::printf(csv ? "%lld,%lld,%s,%.3f,%.1f,%.4f,%s\n" : "%-4lld %10lld %5s %9.1f %12.0f %10.3f  %s\n",
                static_cast<long long>(r.degree), static_cast<long long>(r.seq), r.best ? "yes" : "no", mem, tps, step,
                knobs.c_str());
  }
  return kExitOk;
}

}  // namespace spplan::cli
