// spplan max-seq --model M --gpu G --gpus N [knobs to fix] [--granularity T] [--json]
// Each knob flag given fixes that knob (--sp 16 fixes sp only); the others are searched.
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/constraints.hpp"
#include "cli/report.hpp"
#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {

namespace {

// The limit that stops the answer: what the next longer sequence does not fit in.
costmodel::Estimate next_step(PlanSpec plan, int64_t granularity) {
  plan.seq_len += granularity;
  return costmodel::estimate(plan);
}

}  // namespace

std::vector<FlagSpec> max_seq_flag_specs() {
  return with(with(cluster_flag_specs(false), search::searched_knob_flag_specs()),
              {{"granularity", true, "the step of the answer, in tokens", kSeqAllowed, "1k"}, conservative_flag_spec(),
               json_flag_spec()});
}

int cmd_max_seq(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, max_seq_flag_specs());
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
  const auto constraints = search::read_constraints(*args, &*base);
  if (!constraints.ok()) return fail(constraints.status());
  // The measured band: the same search booking the memory the planner has under-predicted for
  // this trainer and GPU as headroom is the answer at its edge (--conservative answers it).
  const MemoryBand band = memory_band(*base, measured_accuracy());
  PlanSpec at_edge = *base;
  at_edge.memory_headroom = band.conservative_headroom(base->memory_headroom);
  const auto longest = [&](const PlanSpec& plan) { return search::max_seq_searched(plan, granularity, *constraints); };
  const std::optional<search::RankedPlan> edge = longest(at_edge);
  const bool conservative = args->has("conservative");
  // The answer keeps the allocator slack allowance (the safe side); the same search without it is
  // the most that could run when the allocator leaves nothing stranded: the margin, stated. With
  // nothing measured beyond the headroom asked, the edge is the answer: searched once.
  const bool edge_is_answer = conservative || at_edge.memory_headroom == base->memory_headroom;
  const std::optional<search::RankedPlan> best = edge_is_answer ? edge : longest(*base);
  PlanSpec no_slack = conservative ? at_edge : *base;
  no_slack.cluster.gpu.allocator_fragmentation = 0.0;
  const std::optional<search::RankedPlan> upper = longest(no_slack);
  // The longest sequence whose plan is safe (search.hpp is_safe): the answer is an edge, so its plan
  // leaves almost nothing free; this one leaves more than the measured error (--risky: not searched).
  std::optional<search::RankedPlan> safe;
  if (constraints->ranking == search::Ranking::kSafeFirst) {
    safe = longest(search::with_safe_headroom(conservative ? at_edge : *base));
  }
  if (!best) {  // nothing fits, or nothing was priced: the trainer runs or launches no knob set here
    search::SearchResult excluded;
    PlanSpec probe = *base;
    probe.seq_len = 2 * base->cluster.num_gpus * granularity;
    if (search::candidate_knobs(probe, *constraints, &excluded.excluded_by_trainer).empty()) {
      return fail(search::no_candidate_status(excluded, *base));
    }
  }
  const int64_t max_seq = best ? best->plan.seq_len : 0, upper_seq = upper ? upper->plan.seq_len : 0;
  const int64_t edge_seq = edge ? edge->plan.seq_len : 0;
  // The slack the answer counts at the limit, and all the allocator keeps when memory is plentiful.
  const costmodel::AllocatorSlack slack = costmodel::allocator_slack(*base);
  const double slack_pct = 100.0 * slack.needed_fraction(), kept_pct = 100.0 * slack.fraction;
  // The answer's step: granularity, or with a ring its multiple the zigzag split needs.
  const int64_t unit = best ? search::sequence_unit(best->plan, granularity) : granularity;
  const bool capped = search::at_search_cap(max_seq, unit);
  const costmodel::Estimate next = best && !capped ? next_step(best->plan, unit) : costmodel::Estimate{};
  // Host memory and the attention kernel's index range stop a sequence whatever the GPU's margins.
  const bool gpu_bound = next.limit == costmodel::Estimate::Limit::kGpuMemory;
  if (args->has("json")) {
    nlohmann::json j{{"max_seq", max_seq}, {"max_seq_without_allocator_slack", upper_seq},
                     {"allocator_fragmentation", base->cluster.gpu.allocator_fragmentation},
                     {"allocator_slack_at_limit", slack.needed_fraction()},
                     {"max_seq_is_lower_bound", capped},
                     {"limit", capped ? "the longest sequence searched" : search::limit_name(next.limit)},
                     {"conservative", conservative},
                     {"band", band_json(band, at_edge.memory_headroom)},
                     {"max_seq_at_band_edge", edge_seq},
                     {"max_seq_safe", safe ? nlohmann::json(safe->plan.seq_len) : nlohmann::json()},
                     {"safe_margin_pct", search::safe_margin_pct(*base)}};
    if (best) {
      j["plan"] = estimate_json(best->plan, best->estimate);
      j["layout"] = search::layout_text(*best);
    }
    print_json(std::move(j));
  } else if (best) {
    if (capped) {
      std::cout << "max_seq: at least " << max_seq << " tokens (" << seq_text(max_seq)
                << "): the longest sequence searched fits; longer ones were not tried\n";
    } else {
      std::cout << "max_seq: " << max_seq << " tokens (" << seq_text(max_seq) << ")"
                << (conservative ? ", at the measured band's edge" : "") << "\n";
    }
    if (!capped && !gpu_bound) {
      std::cout << "limit: " << next.reason() << " at " << max_seq + unit
                << " tokens; the GPU memory margins do not bind here\n";
    } else if (!capped) {
      std::cout << "limit: GPU memory; margin: counts " << format_number(slack_pct)
                << "% allocator slack on the memory freed within a step"
                << (slack_pct < kept_pct ? " (what the allocator keeps at the limit; the rest of its " + format_number(kept_pct) +
                                               "% it gives back there)"
                                         : std::string())
                << "; without it " << upper_seq << " tokens ("
                << seq_text(upper_seq) << ") is the most that can run\n";
    }
    std::cout << "band: " << band.words()
              << band.edge_words(at_edge.memory_headroom, std::to_string(edge_seq) + " tokens (" + seq_text(edge_seq) + ")")
              << "\n";
    if (safe) {
      std::cout << "safe: " << safe->plan.seq_len << " tokens (" << seq_text(safe->plan.seq_len) << ") leave more than "
                << format_number("%.1f%%", search::safe_margin_pct(*base)) << " of GPU memory free ("
                << search::held_against_words(*base) << "); the answer above is "
                << (best->estimate.free_memory_pct() > search::safe_margin_pct(*base) ? "safe" : "risky: it may not fit when it runs")
                << "\n";
    } else if (constraints->ranking == search::Ranking::kSafeFirst) {
      std::cout << "safe: no sequence leaves more than " << format_number("%.1f%%", search::safe_margin_pct(*base))
                << " of GPU memory free (" << search::held_against_words(*base) << ")\n";
    }
    std::cout << "layout: " << search::layout_text(*best) << "\n";
    std::cout << estimate_text(best->plan, best->estimate);
  } else {
    std::cout << "max_seq: 0 (not even " << granularity << " tokens fit)\n";
  }
  return kExitOk;
}

}  // namespace spplan::cli
