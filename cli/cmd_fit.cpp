// spplan fit --model M --gpu G --gpus N --seq S [--lengths FILE] [knobs to fix] [--json]: exit 0 when some plan
// fits, 1 when none does, 2 on bad input; either way the smallest GPU count of that GPU that fits.
#include <iostream>
#include <optional>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/constraints.hpp"
#include "cli/corpus_flags.hpp"
#include "cli/report.hpp"
#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {
namespace {

// Searching beyond this many GPUs is no longer a "rent a few more" answer.
constexpr int64_t kMaxSuggestedGpus = 4096;

// "1 GPU", "8 GPUs".
std::string gpus_words(int64_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

// Why more GPUs stop helping. sp is bounded by the heads; ring attention (cp) spreads the sequence
// over the GPUs beyond it, so what is left is what every GPU still holds at the largest count: the
// closest miss there. "sp is at most 64 (the 64 attention heads ...); ring attention (cp) ...".
std::string count_bound(const PlanSpec& plan, int64_t max_gpus, const search::KnobConstraints& constraints) {
  const std::vector<int64_t> sp = valid_sp_degrees(plan.model, max_gpus);
  std::string out = "sp is at most " + std::to_string(sp.empty() ? 1 : sp.back()) + " (the " +
                    std::to_string(plan.model.num_attention_heads) + " attention heads and " +
                    std::to_string(plan.model.num_key_value_heads) + " kv heads of " + plan.model.name + ")";
  if (plan.seq_len % 4 != 0 || (constraints.cp && *constraints.cp == 1)) {
    // No ring: GPUs beyond the sp group only add data parallelism.
    return out + ", ring attention (cp) " +
           (plan.seq_len % 4 != 0 ? std::string("needs a sequence divisible by 2 x sp x cp")
                                  : std::string("is fixed to 1")) +
           ", and GPUs beyond the sp group add data parallelism, which does not shorten the sequence per GPU";
  }
  PlanSpec at = plan;
  at.cluster.num_gpus = max_gpus;
  const search::SearchResult found = search::search_plans(at, true, constraints);
  const search::Rejected* closest = nullptr;
  for (const auto& r : found.rejected) {
    if (closest == nullptr || r.need_over_have < closest->need_over_have) closest = &r;
  }
  out += "; ring attention (cp) spreads the sequence over the other GPUs, yet on " + std::to_string(max_gpus) +
         " GPUs each still holds what does not fit";
  if (closest != nullptr) out += " (closest: " + knobs_text(closest->knobs) + ", " + closest->reason + ")";
  return out;
}
// A ring the flags pin (--cp, with --sp or at the smallest sp, 1) that cannot split the sequence
// forms no plan at any count: bad input, in the words estimate refuses it with, not "does not fit".
// Every larger sp needs a multiple of what sp 1 needs, so sp 1 failing rules out them all.
Status check_ring_splits_sequence(const PlanSpec& base, const search::KnobConstraints& constraints) {
  if (!constraints.cp || *constraints.cp == 1) return Status::ok();
  PlanSpec probe = base;
  probe.knobs.sp = constraints.sp.value_or(1);
  probe.knobs.cp = *constraints.cp;
  probe.cluster.num_gpus = probe.knobs.sp * probe.knobs.cp;  // the count is checked by read_constraints
  return check_context_parallel(probe, flag_where);
}

}  // namespace

std::vector<FlagSpec> fit_flag_specs() {
  return with(with(with(cluster_flag_specs(true), corpus_flag_specs()), search::searched_knob_flag_specs()),
              {conservative_flag_spec(), json_flag_spec()});
}

int cmd_fit(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, fit_flag_specs());
  if (!args.ok()) return fail(args.status());
  auto base = plan_from_flags(*args, true);
  if (!base.ok()) return fail(base.status());
  const auto corpus = corpus_options(*args);
  if (!corpus.ok()) return fail(corpus.status());
  const std::optional<corpus::PackedCorpus> packed = apply_corpus(*corpus, &*base);
  const auto constraints = search::read_constraints(*args, &*base);
  if (!constraints.ok()) return fail(constraints.status());
  if (const Status s = check_ring_splits_sequence(*base, *constraints); !s) return fail(s);
  // The measured band: the smallest count that fits when the memory the planner has
  // under-predicted for this trainer and GPU is booked as headroom; --conservative answers it.
  const MemoryBand band = memory_band(*base, measured_accuracy());
  PlanSpec at_edge = *base;
  at_edge.memory_headroom = band.conservative_headroom(base->memory_headroom);
  const std::optional<int64_t> edge_needed = search::smallest_fitting_gpus(at_edge, kMaxSuggestedGpus, *constraints);
  if (args->has("conservative")) base->memory_headroom = at_edge.memory_headroom;
  const search::SearchResult result = search::search_plans(*base, false, *constraints);
  const bool fits = !result.feasible.empty();
  // Fitting or not, the answer names the smallest count: on fewer GPUs the same run costs less.
  const std::optional<int64_t> needed =
      search::smallest_fitting_gpus(*base, fits ? base->cluster.num_gpus : kMaxSuggestedGpus, *constraints);
  // Safe first: the smallest count whose best plan is safe, beside the smallest that fits at all.
  std::optional<int64_t> safe_needed;
  const bool safe_first = constraints->ranking == search::Ranking::kSafeFirst;
  if (safe_first) safe_needed = search::smallest_fitting_gpus(search::with_safe_headroom(*base), kMaxSuggestedGpus, *constraints);
  if (args->has("json")) {
    nlohmann::json j{{"fits", fits}, {"feasible_plans", result.feasible.size()}};
    j["safety"] = safety_json(result.feasible, constraints->ranking);
    if (fits) {
      j["best"] = estimate_json(result.feasible.front().plan, result.feasible.front().estimate);
      j["why"] = search::layout_reason(result);
    }
    j["smallest_gpus_that_fit"] = needed ? nlohmann::json(*needed) : nlohmann::json(nullptr);
    j["smallest_gpus_safe"] = safe_needed ? nlohmann::json(*safe_needed) : nlohmann::json(nullptr);
    if (!needed) j["why_no_count_fits"] = count_bound(*base, kMaxSuggestedGpus, *constraints);
    j["conservative"] = args->has("conservative");
    j["band"] = band_json(band, at_edge.memory_headroom);
    j["smallest_gpus_at_band_edge"] = edge_needed ? nlohmann::json(*edge_needed) : nlohmann::json(nullptr);
    print_json(std::move(j));
  } else if (fits) {
    const auto& best = result.feasible.front();
    std::cout << "fits: yes (" << result.feasible.size() << " plans; best " << knobs_text(best.plan.knobs) << ", "
              << static_cast<long long>(best.estimate.tokens_per_s) << " tokens/s, " << search::group_name(best) << ")\n";
    if (packed) {
      std::cout << corpus_text(*corpus, *base, *packed) << "\n";
      std::cout << "epoch: " << duration_text(best.estimate.epoch_s) << ", " << dollars_text(best.estimate.usd_per_epoch) << " ("
                << count_text(best.estimate.real_tokens_per_s) << " real tokens/s)\n";
    }
    std::cout << safety_text(result.feasible, constraints->ranking);
    std::cout << "why this layout: " << search::layout_reason(result) << "\n";
    if (needed && *needed < base->cluster.num_gpus) {
      std::cout << "the smallest count that fits is " << gpus_words(*needed) << "\n";
    }
  } else {
    std::cout << "fits: no on " << base->cluster.num_gpus << "x " << base->cluster.gpu.name << "; ";
    if (needed) {
      std::cout << "the smallest count that fits is " << gpus_words(*needed) << "\n";
    } else {
      std::cout << "nothing up to " << kMaxSuggestedGpus << " GPUs fits: " << count_bound(*base, kMaxSuggestedGpus, *constraints)
                << "\n";
    }
  }
  if (!args->has("json") && safe_first) {
    std::cout << "smallest safe count: " << (safe_needed ? gpus_words(*safe_needed)
                                          : "no count up to " + std::to_string(kMaxSuggestedGpus) + " GPUs has a safe plan")
              << " (more than " << format_number("%.1f%%", search::safe_margin_pct(*base)) << " of GPU memory free, "
              << search::held_against_words(*base) << ")\n";
  }
  if (!args->has("json")) {
    std::cout << "band: " << band.words()
              << band.edge_words(at_edge.memory_headroom,
                                 edge_needed ? "the smallest count is " + gpus_words(*edge_needed)
                                             : "nothing up to " + std::to_string(kMaxSuggestedGpus) + " GPUs fits")
              << "\n";
  }
  return fits ? kExitOk : kExitNoFit;
}

}  // namespace spplan::cli
