#include "planner/search/search.hpp"

#include <algorithm>

#include "planner/config/plan_rules.hpp"

namespace spplan::search {
namespace {

bool allowed(const PlanSpec& plan) {
  return check_plan(plan, [](const std::string& key) { return key; }).is_ok();
}

}  // namespace

std::vector<Knobs> candidate_knobs(const PlanSpec& base) {
  std::vector<Knobs> out;
  const bool has_nvme = base.cluster.gpu.nvme_GBps_per_node > 0;
  for (int64_t sp : valid_sp_degrees(base.model, base.cluster.num_gpus)) {
    for (int64_t zero = 0; zero <= 3; ++zero) {
      for (OffloadDevice opt : {OffloadDevice::kNone, OffloadDevice::kCpu, OffloadDevice::kNvme}) {
        if (opt == OffloadDevice::kNvme && !has_nvme) continue;
        for (OffloadDevice params : {OffloadDevice::kNone, OffloadDevice::kCpu}) {
          for (ActCkpt ckpt : {ActCkpt::kNone, ActCkpt::kFull, ActCkpt::kOffload}) {
            for (int tiling = 0; tiling < 4; ++tiling) {
              for (int64_t micro_batch : {1, 2, 4}) {
                Knobs k = base.knobs;
                k.sp = sp;
                k.zero_stage = zero;
                k.offload_optimizer = opt;
                k.offload_params = params;
                k.act_ckpt = ckpt;
                k.tiled_mlp = (tiling & 1) != 0;
                k.tiled_loss = (tiling & 2) != 0;
                k.micro_batch = micro_batch;
                PlanSpec plan = base;
                plan.knobs = k;
                if (allowed(plan)) out.push_back(k);
              }
            }
          }
        }
      }
    }
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

SearchResult search_plans(const PlanSpec& base, bool keep_rejected) {
  SearchResult result;
  for (const Knobs& k : candidate_knobs(base)) {
    PlanSpec plan = base;
    plan.knobs = k;
    costmodel::Estimate e = costmodel::estimate(plan);
    ++result.evaluated;
    if (e.fits) {
      result.feasible.push_back({plan, std::move(e)});
    } else if (keep_rejected) {
      result.rejected.push_back({k, e.reason()});
    }
  }
  std::sort(result.feasible.begin(), result.feasible.end(), ranks_before);
  return result;
}

std::optional<int64_t> smallest_fitting_gpus(const PlanSpec& base, int64_t max_gpus) {
  std::vector<int64_t> counts;
  for (int64_t n = 1; n < base.cluster.gpus_per_node(); n *= 2) counts.push_back(n);
  for (int64_t n = base.cluster.gpus_per_node(); n <= max_gpus; n *= 2) counts.push_back(n);
  for (int64_t n : counts) {
    if (n > max_gpus) break;
    PlanSpec plan = base;
    plan.cluster.num_gpus = n;
    for (const Knobs& k : candidate_knobs(plan)) {
      plan.knobs = k;
      if (costmodel::estimate(plan).fits) return n;
    }
  }
  return std::nullopt;
}

int64_t max_seq_fixed(const PlanSpec& base, int64_t granularity) {
  // Peak memory grows with the sequence, so "fits" is monotone: bisect on multiples of granularity.
  PlanSpec plan = base;
  int64_t lo = 0, hi = kMaxSearchedSeqLen / granularity + 1;  // lo fits (or is 0), hi does not
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    plan.seq_len = mid * granularity;
    if (costmodel::estimate(plan).fits) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo * granularity;
}

std::optional<RankedPlan> max_seq_searched(const PlanSpec& base, int64_t granularity) {
  std::optional<RankedPlan> best;
  PlanSpec plan = base;
  // The plan rules refuse a sequence of 0 tokens, and callers asking for the longest sequence
  // have none yet: enumerate the knobs at the shortest length searched.
  plan.seq_len = granularity;
  for (const Knobs& k : candidate_knobs(plan)) {
    if (k.micro_batch != 1) continue;  // a longer sequence never comes from a bigger micro batch
    plan.knobs = k;
    plan.seq_len = best ? best->plan.seq_len + granularity : granularity;
    if (!costmodel::estimate(plan).fits) continue;  // cannot beat the current best
    const int64_t seq = max_seq_fixed(plan, granularity);
    plan.seq_len = seq;
    RankedPlan candidate{plan, costmodel::estimate(plan)};
    if (!best || seq > best->plan.seq_len ||
        (seq == best->plan.seq_len && ranks_before(candidate, *best))) {
      best = std::move(candidate);
    }
  }
  return best;
}

}  // namespace spplan::search
