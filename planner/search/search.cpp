#include "planner/search/search.hpp"

#include <algorithm>
#include <numeric>

#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"

namespace spplan::search {
namespace {

std::string key_name(const std::string& key) { return key; }

// Why no format of the plan's trainer launches it: each format's reason.
std::string no_format_reason(const PlanSpec& plan) {
  std::string reasons;
  for (const FormatRecord& f : record_of(plan).formats) {
    if (f.component) continue;
    reasons += (reasons.empty() ? "" : "; ") + check_format_expresses(plan, f.name, key_name).message();
  }
  return "no format of trainer \"" + plan.stack.trainer + "\" launches it: " + reasons;
}

// The (micro batch, accumulation) pairs to try on a layout of `dp` data-parallel ranks. Without a
// global batch: micro batches 1, 2 and 4 at the base plan's accumulation, so no two plans differ
// only in accumulation (which changes the optimisation, not only the speed). With one: each micro
// batch that divides its share per rank, the accumulation making up the rest; none when dp does
// not divide it. A value the user fixed is kept.
std::vector<std::pair<int64_t, int64_t>> batch_pairs(const PlanSpec& base, const KnobConstraints& constraints, int64_t dp) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const std::vector<int64_t> micro_batches =
      constraints.micro_batch ? std::vector<int64_t>{*constraints.micro_batch} : std::vector<int64_t>{1, 2, 4};
  if (!constraints.global_batch) {
    const int64_t accumulation = constraints.grad_accum_steps.value_or(base.knobs.grad_accum_steps);
    for (int64_t mb : micro_batches) out.emplace_back(mb, accumulation);
    return out;
  }
  if (*constraints.global_batch % dp != 0) return out;
  const int64_t per_rank = *constraints.global_batch / dp;
  for (int64_t mb : micro_batches) {
    if (per_rank % mb != 0) continue;
    const int64_t accumulation = per_rank / mb;
    if (constraints.grad_accum_steps && *constraints.grad_accum_steps != accumulation) continue;
    out.emplace_back(mb, accumulation);
  }
  return out;
}

// Why a layout trains no plan of the global batch, as the excluded counts say it.
std::string global_batch_reason(const KnobConstraints& constraints) {
  return "--global-batch: value " + std::to_string(*constraints.global_batch) +
         " is not micro batch x accumulation x dp for the layout's dp (GPUs / (sp x cp))" +
         (constraints.micro_batch || constraints.grad_accum_steps ? " with the micro batch and accumulation fixed" : "") +
         " (allowed: a multiple of dp)";
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> sp_cp_pairs(const PlanSpec& base, const KnobConstraints& constraints) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t sp : valid_sp_degrees(base.model, base.cluster.num_gpus)) {
    if (constraints.sp && *constraints.sp != sp) continue;
    for (int64_t cp : valid_cp_degrees(base.cluster.num_gpus, sp)) {
      if (!constraints.cp || *constraints.cp == cp) out.emplace_back(sp, cp);
    }
  }
  return out;
}

bool KnobConstraints::allows(const Knobs& k) const {
  return (!sp || *sp == k.sp) && (!cp || *cp == k.cp) && (!cp_comm || k.cp == 1 || *cp_comm == k.cp_comm) &&
         (!zero_stage || *zero_stage == k.zero_stage) &&
         (!micro_batch || *micro_batch == k.micro_batch) &&
         (!grad_accum_steps || *grad_accum_steps == k.grad_accum_steps) &&
         (!offload_optimizer || *offload_optimizer == k.offload_optimizer) &&
         (!offload_params || *offload_params == k.offload_params) && (!act_ckpt || *act_ckpt == k.act_ckpt) &&
         (!tiled_mlp || *tiled_mlp == k.tiled_mlp) && (!tiled_loss || *tiled_loss == k.tiled_loss);
}

std::string limit_name(costmodel::Estimate::Limit limit) {
  switch (limit) {
    case costmodel::Estimate::Limit::kNone: return "";
    case costmodel::Estimate::Limit::kGpuMemory: return "GPU memory";
    case costmodel::Estimate::Limit::kHostMemory: return "host memory per node";
    case costmodel::Estimate::Limit::kKernelIndexRange: return "the attention kernel's index range";
  }
  return "";
}

int64_t global_batch(const PlanSpec& plan) { return plan.knobs.micro_batch * plan.knobs.grad_accum_steps * plan.dp(); }

PlanSpec with_knobs(const PlanSpec& base, const Knobs& knobs) {
  PlanSpec plan = base;
  plan.knobs = knobs;
  settle_layout_attention(&plan);
  return plan;
}

namespace {

// Exclusions counted by cause (trainer_rules.hpp first_refusal, format_refusals) with one plan of
// each, whose message is written once at the end: the search meets thousands of them.
struct Exclusions {
  std::map<std::vector<const void*>, std::pair<int64_t, PlanSpec>> by_cause;

  void add(const PlanSpec& plan) {
    const void* trainer = first_refusal(plan);
    std::vector<const void*> cause{trainer};
    if (trainer == nullptr) cause = format_refusals(plan);
    auto [it, fresh] = by_cause.try_emplace(cause, 0, PlanSpec{});
    if (fresh) it->second.second = plan;
    ++it->second.first;
  }
  void write(std::map<std::string, int64_t>* out) const {
    for (const auto& [cause, seen] : by_cause) {
      const Status runs = check_trainer_runs(seen.second, key_name);
      (*out)[runs.is_ok() ? no_format_reason(seen.second) : runs.message()] += seen.first;
    }
  }
};

}  // namespace

std::vector<Knobs> candidate_knobs(const PlanSpec& base, const KnobConstraints& constraints,
                                   std::map<std::string, int64_t>* excluded_by_trainer) {
  std::vector<Knobs> out;
  const bool has_nvme = base.cluster.gpu.nvme_GBps_per_node > 0;
  Exclusions excluded;
  int64_t left_out_by_global_batch = 0;  // layouts' knob sets (at micro batch 1) the global batch leaves out
  PlanSpec plan = base;  // each candidate's knobs in turn: no copy of the plan per candidate
  for (const auto& [sp, cp] : sp_cp_pairs(base, constraints)) {
    // One ring variant a layout: the one asked for, else the trainer's (trainer_rules.hpp).
    plan.knobs.sp = sp;
    plan.knobs.cp = cp;
    std::vector<std::pair<int64_t, int64_t>> batches = batch_pairs(base, constraints, base.cluster.num_gpus / (sp * cp));
    const bool batch_left_out = batches.empty();
    if (batch_left_out) batches = {{1, 1}};  // to count the knob sets the layout would have had
    const CpComm cp_comm = constraints.cp_comm.value_or(searched_cp_comm(plan));
    for (int64_t zero = 0; zero <= 3; ++zero) {
      for (OffloadDevice opt : {OffloadDevice::kNone, OffloadDevice::kCpu, OffloadDevice::kNvme}) {
        if (opt == OffloadDevice::kNvme && !has_nvme) continue;
        for (OffloadDevice params : {OffloadDevice::kNone, OffloadDevice::kCpu}) {
          for (ActCkpt ckpt : {ActCkpt::kNone, ActCkpt::kFull, ActCkpt::kOffload}) {
            for (int tiling = 0; tiling < 4; ++tiling) {
              for (const auto& [micro_batch, accumulation] : batches) {
                Knobs k = base.knobs;
                k.sp = sp;
                k.cp = cp;
                k.cp_comm = cp_comm;
                k.zero_stage = zero;
                k.offload_optimizer = opt;
                k.offload_params = params;
                k.act_ckpt = ckpt;
                k.tiled_mlp = (tiling & 1) != 0;
                k.tiled_loss = (tiling & 2) != 0;
                k.micro_batch = micro_batch;
                k.grad_accum_steps = accumulation;
                if (batch_left_out) {  // counted where it would have been a candidate
                  KnobConstraints unbatched = constraints;
                  unbatched.micro_batch.reset();
                  unbatched.grad_accum_steps.reset();
                  if (!unbatched.allows(k)) continue;
                  plan.knobs = k;
                  settle_layout_attention(&plan);
                  if (check_plan_shape(plan, key_name).is_ok() && trainer_runs(plan) && some_format_launches(plan)) {
                    ++left_out_by_global_batch;
                  }
                  continue;
                }
                if (!constraints.allows(k)) continue;
                plan.knobs = k;
                settle_layout_attention(&plan);
                if (!check_plan_shape(plan, key_name).is_ok()) continue;  // no trainer runs it
                // Only what the trainer runs and one of its formats launches: a plan is what its stack runs.
                if (trainer_runs(plan) && some_format_launches(plan)) {
                  out.push_back(k);
                } else if (excluded_by_trainer != nullptr) {
                  excluded.add(plan);
                }
              }
            }
          }
        }
      }
    }
  }
  if (excluded_by_trainer != nullptr) {
    excluded.write(excluded_by_trainer);
    if (left_out_by_global_batch > 0) (*excluded_by_trainer)[global_batch_reason(constraints)] += left_out_by_global_batch;
  }
  return out;
}

bool ranks_before(const RankedPlan& a, const RankedPlan& b) {
  const auto& x = a.estimate;
  const auto& y = b.estimate;
  if (x.tokens_per_s != y.tokens_per_s) return x.tokens_per_s > y.tokens_per_s;
  if (x.memory.total_bytes() != y.memory.total_bytes()) return x.memory.total_bytes() < y.memory.total_bytes();
  return x.usd_per_million_tokens < y.usd_per_million_tokens;
}

bool inside_measured_error(const RankedPlan& p) {
  return p.plan.memory_error_pct > 0 && p.estimate.free_memory_pct() <= p.plan.memory_error_pct;
}

double safe_margin_pct(const PlanSpec& plan) {
  return plan.memory_error_pct > 0 ? plan.memory_error_pct : kUnmeasuredHeadroomPct;
}

bool is_safe(const RankedPlan& p) { return p.estimate.fits && p.estimate.free_memory_pct() > safe_margin_pct(p.plan); }

PlanSpec with_safe_headroom(const PlanSpec& plan) {
  // Above, not at: a plan leaving exactly the headroom free fits, yet exactly the margin is not safe.
  constexpr double kAboveTheMarginFraction = 1e-6;
  PlanSpec safe = plan;
  safe.memory_headroom = std::max(plan.memory_headroom, safe_margin_pct(plan) / 100.0 + kAboveTheMarginFraction);
  return safe;
}

const char* group_name(const RankedPlan& p) { return is_safe(p) ? "safe" : "risky"; }

std::string held_against_words(const PlanSpec& plan) {
  const std::string pct = format_number("%.1f%%", safe_margin_pct(plan));
  return plan.memory_error_pct > 0 ? "a " + pct + " measured error" : "the " + pct + " default headroom";
}

std::string risky_beside_safe_words(const RankedPlan& risky, const RankedPlan& safe) {
  const double gain_pct = 100.0 * (risky.estimate.tokens_per_s / safe.estimate.tokens_per_s - 1.0);
  return format_number(gain_pct < 10 ? "%.1f%%" : "%.0f%%", gain_pct) +
         " faster than the best safe plan, " + format_number("%.1f%%", risky.estimate.free_memory_pct()) +
         " free against " + held_against_words(risky.plan);
}

int offload_count(const Knobs& k) {
  return (k.offload_optimizer != OffloadDevice::kNone) + (k.offload_params != OffloadDevice::kNone) +
         (k.act_ckpt == ActCkpt::kOffload);
}

namespace {

// Speed first, then inside each noise band the preferences: the order of one group.
void rank_group(std::vector<RankedPlan>* plans, const std::function<double(const RankedPlan&)>& tokens_per_s) {
  std::stable_sort(plans->begin(), plans->end(), [&](const RankedPlan& a, const RankedPlan& b) {
    const double ta = tokens_per_s(a), tb = tokens_per_s(b);
    return ta != tb ? ta > tb : ranks_before(a, b);
  });
  const auto preferred = [](const RankedPlan& a, const RankedPlan& b) {
    // A plan that may not fit when it runs is no bargain at the same speed (once, a plan at
    // 79.3 of 79.6 GiB ranked first, the planner's largest measured error 14.8%).
    const bool ra = inside_measured_error(a), rb = inside_measured_error(b);
    if (ra != rb) return rb;
    // A smaller ring first: Ulysses runs on every ALST stack (DeepSpeed, ArcticTraining, HF), a ring
    // only on context-parallel ones (Accelerate FSDP2, Megatron), and a tie in speed is no reason to
    // need one.
    if (a.plan.knobs.cp != b.plan.knobs.cp) return a.plan.knobs.cp < b.plan.knobs.cp;
    const int oa = offload_count(a.plan.knobs), ob = offload_count(b.plan.knobs);
    if (oa != ob) return oa < ob;
    if (a.plan.knobs.micro_batch != b.plan.knobs.micro_batch) return a.plan.knobs.micro_batch < b.plan.knobs.micro_batch;
    // Then the smaller global batch: accumulation is a training choice too, not a speed-up.
    if (a.plan.knobs.grad_accum_steps != b.plan.knobs.grad_accum_steps) {
      return a.plan.knobs.grad_accum_steps < b.plan.knobs.grad_accum_steps;
    }
    const double ma = a.estimate.memory.total_bytes(), mb = b.estimate.memory.total_bytes();
    if (ma != mb) return ma < mb;
    return false;  // stable: the faster first
  };
  for (auto band = plans->begin(); band != plans->end();) {
    const double floor_tokens_per_s = tokens_per_s(*band) * (1.0 - kRankNoiseBand);
    auto end = std::find_if(band, plans->end(), [&](const RankedPlan& p) { return tokens_per_s(p) < floor_tokens_per_s; });
    std::stable_sort(band, end, preferred);
    band = end;
  }
}

}  // namespace

void rank_plans_by(std::vector<RankedPlan>* plans, const std::function<double(const RankedPlan&)>& tokens_per_s,
                   Ranking ranking) {
  if (ranking == Ranking::kSpeedOnly) return rank_group(plans, tokens_per_s);
  // A renter copies row 1: a plan that may not fit when it runs is no bargain at any speed, so the
  // groups are ranked apart and never mix (a noise band does not reach across them).
  std::vector<RankedPlan> safe, risky;
  for (RankedPlan& p : *plans) (is_safe(p) ? safe : risky).push_back(std::move(p));
  rank_group(&safe, tokens_per_s);
  rank_group(&risky, tokens_per_s);
  plans->clear();
  for (RankedPlan& p : safe) plans->push_back(std::move(p));
  for (RankedPlan& p : risky) plans->push_back(std::move(p));
}

void rank_plans(std::vector<RankedPlan>* plans, Ranking ranking) {
  rank_plans_by(plans, [](const RankedPlan& p) { return p.estimate.tokens_per_s; }, ranking);
}

const RankedPlan* fastest_risky_beyond_best_safe(const std::vector<RankedPlan>& ranked) {
  const RankedPlan* safe = nullptr;
  const RankedPlan* risky = nullptr;
  for (const RankedPlan& p : ranked) {
    if (is_safe(p)) {
      if (safe == nullptr) safe = &p;
    } else if (risky == nullptr || p.estimate.tokens_per_s > risky->estimate.tokens_per_s) {
      risky = &p;
    }
  }
  if (safe == nullptr || risky == nullptr || risky->estimate.tokens_per_s <= safe->estimate.tokens_per_s) return nullptr;
  return risky;
}

std::string ranking_rule(Ranking ranking) {
  if (ranking == Ranking::kSpeedOnly) return std::string("by ") + kRankingRule + " (--risky: safe or not)";
  return std::string("safe plans first, then by ") + kRankingRule;
}

namespace {

// The kernels one knob set is priced with (its plan settled): each the trainer runs on the plan's
// layout (searched_attention) that the plan rules, the trainer and one of its formats take. The
// settled kernel is first; candidate_knobs checked it.
std::vector<AttentionKernel> kernels_to_price(PlanSpec* plan) {
  const AttentionKernel settled = plan->stack.attention;
  std::vector<AttentionKernel> out{settled};
  for (AttentionKernel kernel : searched_attention(*plan)) {
    if (kernel == settled) continue;
    plan->stack.attention = kernel;
    if (check_plan_shape(*plan, key_name).is_ok() && trainer_runs(*plan) && some_format_launches(*plan)) {
      out.push_back(kernel);
    }
  }
  plan->stack.attention = settled;
  return out;
}

// One knob set's plan on the kernel that serves it best (it fits, then ranks_before), or its
// settled kernel's estimate when none fits: a table row is a knob set, never two kernels of one.
RankedPlan best_kernel_plan(PlanSpec* plan) {
  std::optional<RankedPlan> best;
  for (AttentionKernel kernel : kernels_to_price(plan)) {
    plan->stack.attention = kernel;
    RankedPlan candidate{*plan, costmodel::estimate(*plan)};
    const bool better = !best || (candidate.estimate.fits && (!best->estimate.fits || ranks_before(candidate, *best)));
    if (better) best = std::move(candidate);
  }
  return std::move(*best);
}

}  // namespace

SearchResult search_plans(const PlanSpec& base, bool keep_rejected, const KnobConstraints& constraints) {
  SearchResult result;
  PlanSpec plan = base;
  for (const Knobs& k : candidate_knobs(base, constraints, keep_rejected ? &result.excluded_by_trainer : nullptr)) {
    plan.knobs = k;
    settle_layout_attention(&plan);
    RankedPlan priced = best_kernel_plan(&plan);
    ++result.evaluated;  // knob sets, each on its best kernel
    if (priced.estimate.fits) {
      result.feasible.push_back(std::move(priced));
    } else if (keep_rejected) {
      const costmodel::Estimate& e = priced.estimate;
      result.rejected.push_back({k, e.reason(), e.limit, e.over_limit()});
    }
  }
  rank_plans(&result.feasible, constraints.ranking);
  return result;
}

namespace {

bool some_plan_fits(PlanSpec plan, int64_t gpus, const KnobConstraints& constraints) {
  plan.cluster.num_gpus = gpus;
  for (const Knobs& k : candidate_knobs(plan, constraints)) {
    plan.knobs = k;
    settle_layout_attention(&plan);
    for (AttentionKernel kernel : kernels_to_price(&plan)) {
      plan.stack.attention = kernel;
      if (costmodel::estimate(plan).fits) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<int64_t> smallest_fitting_gpus(const PlanSpec& base, int64_t max_gpus,
                                             const KnobConstraints& constraints) {
  const int64_t per_node = base.cluster.gpus_per_node();
  for (int64_t n = 1; n <= std::min(per_node, max_gpus); ++n) {
    if (some_plan_fits(base, n, constraints)) return n;
  }
  // Whole nodes: double to the first count that fits, then try each node count in between (more
  // GPUs do not always fit more: the valid sp degrees depend on the count's divisors).
  int64_t fail_nodes = 1, fit_nodes = 0;
  for (int64_t nodes = 2; nodes * per_node <= max_gpus; nodes *= 2) {
    if (some_plan_fits(base, nodes * per_node, constraints)) {
      fit_nodes = nodes;
      break;
    }
    fail_nodes = nodes;
  }
  if (fit_nodes == 0) return std::nullopt;
  // Each node count is a search: past 64 counts between the miss and the fit (a fit at 4,096
  // nodes tried 2,047 counts, 47 s), halve the gap while its middle fits, then try each count.
  constexpr int64_t kNodeCountsTriedOneByOne = 64;
  while (fit_nodes - fail_nodes > kNodeCountsTriedOneByOne) {
    const int64_t mid = fail_nodes + (fit_nodes - fail_nodes) / 2;
    (some_plan_fits(base, mid * per_node, constraints) ? fit_nodes : fail_nodes) = mid;
  }
  for (int64_t nodes = fail_nodes + 1; nodes < fit_nodes; ++nodes) {
    if (some_plan_fits(base, nodes * per_node, constraints)) return nodes * per_node;
  }
  return fit_nodes * per_node;
}

bool at_search_cap(int64_t seq_len, int64_t granularity) {
  return seq_len > 0 && seq_len == kMaxSearchedSeqLen / granularity * granularity;
}

int64_t max_seq_fixed(const PlanSpec& base, int64_t granularity) {
  // Peak memory grows with the sequence, so "fits" is monotone: double to a length that does not
  // fit, then bisect on multiples of granularity.
  PlanSpec plan = base;
  const auto fits = [&](int64_t units) {
    plan.seq_len = units * granularity;
    return costmodel::estimate(plan).fits;
  };
  const int64_t max_units = kMaxSearchedSeqLen / granularity;
  int64_t lo = 0, hi = 1;  // lo fits (or is 0), hi does not once the doubling stops
  while (hi <= max_units && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > max_units) {
    if (fits(max_units)) return max_units * granularity;
    hi = max_units;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo * granularity;
}

int64_t sequence_unit(const PlanSpec& plan, int64_t granularity) {
  const Knobs& k = plan.knobs;
  int64_t unit = k.cp > 1 ? std::lcm(granularity, 2 * k.sp * k.cp) : granularity;
  // A trainer that does not pad splits each sequence evenly over the Ulysses ranks.
  if (k.sp > 1 && !sequence_padded(plan)) unit = std::lcm(unit, k.sp);
  return unit;
}

std::optional<RankedPlan> max_seq_searched(const PlanSpec& base, int64_t granularity,
                                           const KnobConstraints& constraints) {
  std::optional<RankedPlan> best;
  PlanSpec plan = base;
  // The plan rules refuse a sequence of 0 tokens, and callers asking for the longest sequence
  // have none yet: enumerate the knobs at a length every (sp, cp) pair divides in zigzag
  // chunks (2 x GPUs x granularity; sp x cp divides the GPUs), then search each knob set on its
  // own unit (sequence_unit).
  plan.seq_len = 2 * base.cluster.num_gpus * granularity;
  for (const Knobs& k : candidate_knobs(plan, constraints)) {
    // A longer sequence never comes from a bigger micro batch or more accumulation.
    if (k.micro_batch != 1 && !constraints.micro_batch) continue;
    if (k.grad_accum_steps != base.knobs.grad_accum_steps && !constraints.grad_accum_steps && !constraints.global_batch) {
      continue;
    }
    plan.knobs = k;
    settle_layout_attention(&plan);
    const int64_t unit = sequence_unit(plan, granularity);
    for (AttentionKernel kernel : kernels_to_price(&plan)) {
      plan.stack.attention = kernel;
      const int64_t first = best ? (best->plan.seq_len + granularity + unit - 1) / unit * unit : unit;
      if (first > kMaxSearchedSeqLen) continue;
      plan.seq_len = first;
      if (!costmodel::estimate(plan).fits) continue;  // cannot beat the current best
      const int64_t seq = max_seq_fixed(plan, unit);
      plan.seq_len = seq;
      RankedPlan candidate{plan, costmodel::estimate(plan)};
      if (!best || seq > best->plan.seq_len ||
          (seq == best->plan.seq_len && ranks_before(candidate, *best))) {
        best = std::move(candidate);
      }
    }
  }
  return best;
}

}  // namespace spplan::search
