#include "planner/search/explain.hpp"

#include <algorithm>

#include "planner/costmodel/comm.hpp"
#include "planner/core/parse.hpp"

namespace spplan::search {
namespace {

enum class Family { kNone, kUlysses, kRing, kHybrid };

Family family_of(const Knobs& k) {
  if (k.cp == 1) return k.sp == 1 ? Family::kNone : Family::kUlysses;
  return k.sp == 1 ? Family::kRing : Family::kHybrid;
}

const char* family_name(Family f) {
  switch (f) {
    case Family::kNone: return "no sequence parallelism";
    case Family::kUlysses: return "Ulysses only";
    case Family::kRing: return "ring only";
    case Family::kHybrid: return "Ulysses x ring";
  }
  return "";
}

std::string where(bool crosses) { return crosses ? "across nodes" : "inside a node"; }
std::string link(bool crosses) { return crosses ? "the network" : "NVLink"; }

}  // namespace

std::string layout_text(const RankedPlan& r) {
  const Knobs& k = r.plan.knobs;
  const ClusterSpec& c = r.plan.cluster;
  if (k.sp == 1 && k.cp == 1) return "no sequence parallelism";
  const bool sp_crosses = costmodel::group_crosses_nodes(c, k.sp, 1);
  const bool cp_crosses = costmodel::group_crosses_nodes(c, k.cp, k.sp);
  std::string groups, traffic;
  if (k.sp > 1) {
    groups = "sp " + std::to_string(k.sp) + " " + where(sp_crosses);
    traffic = "all-to-all on " + link(sp_crosses);
  }
  if (k.cp > 1) {
    if (!groups.empty()) groups += ", ";
    if (!traffic.empty()) traffic += ", ";
    groups += "cp " + std::to_string(k.cp) + " " + where(cp_crosses);
    const auto& t = r.estimate.time;
    const double hidden = t.cp_comm_s > 0 ? 1.0 - t.exposed_cp_s / t.cp_comm_s : 1.0;
    if (k.cp_comm == CpComm::kAllGather) {
      traffic += "K/V all-gathered on " + link(cp_crosses) + ", not hidden";
    } else {
      traffic += "ring hops on " + link(cp_crosses) + " " + format_number("%.0f%%", 100 * hidden) + " hidden behind attention";
    }
  }
  return groups + ": " + traffic;
}

namespace {

// The best plan of layout family `f` in `feasible` (ranked: the first of a family is its best).
const RankedPlan* best_of(const std::vector<RankedPlan>& feasible, Family f) {
  for (const RankedPlan& p : feasible) {
    if (family_of(p.plan.knobs) == f) return &p;
  }
  return nullptr;
}

}  // namespace

std::string layout_reason(const SearchResult& result) {
  if (result.feasible.empty()) return "";
  const RankedPlan& best = result.feasible.front();
  const Family won = family_of(best.plan.knobs);
  const std::vector<Family> rivals_of{Family::kUlysses, Family::kRing, Family::kHybrid};
  // Where the layouts' best plans run different attention kernels, the kernel is part of why: each
  // is named (a trainer may run FlashAttention under Ulysses and SDPA under its ring).
  const bool kernels_differ = std::any_of(rivals_of.begin(), rivals_of.end(), [&](Family f) {
    const RankedPlan* rival = best_of(result.feasible, f);
    return f != won && rival != nullptr && rival->plan.stack.attention != best.plan.stack.attention;
  });
  const auto on_kernel = [&](const RankedPlan& p, const char* joint) {
    return kernels_differ ? joint + std::string("on ") + to_string(p.plan.stack.attention) : std::string();
  };
  std::string out = layout_text(best) + " (" + format_number("%.0f", best.estimate.tokens_per_s) + " tokens/s" +
                    on_kernel(best, " ") + ")";
  for (Family f : rivals_of) {
    if (f == won) continue;
    const RankedPlan* rival = best_of(result.feasible, f);
    out += "; ";
    out += family_name(f);
    if (rival == nullptr) {
      // Priced and over a limit, or never priced: the plan rules allow none of the family (gpt-oss's
      // attention sinks run without a sequence split).
      const bool priced = std::any_of(result.rejected.begin(), result.rejected.end(),
                                      [&](const Rejected& r) { return family_of(r.knobs) == f; });
      out += priced ? ": none fits among the plans searched" : ": none the trainer and the plan rules allow";
    } else {
      out += ": best " + format_number("%.0f", rival->estimate.tokens_per_s) + " tokens/s (sp " +
             std::to_string(rival->plan.knobs.sp) + ", cp " + std::to_string(rival->plan.knobs.cp) + on_kernel(*rival, ", ") +
             ")";
      // A family whose best is risky ranks after every safe plan, whatever its speed.
      const double best_tps = best.estimate.tokens_per_s;
      if (is_safe(best) && !is_safe(*rival)) {
        out += ", risky: none leaves more GPU memory free than the measured error, so it ranks after the safe plans";
      } else if (rival->estimate.tokens_per_s >= best_tps * (1.0 - kRankNoiseBand)) {
        // Inside the noise band the ranking's preferences decided, not the speed.
        out += format_number(", within %.0f%%: ranked by ring size, offloads, micro batch, memory", 100 * kRankNoiseBand);
      }
    }
  }
  return out;
}

}  // namespace spplan::search
