// Plan search on top of the costmodel: enumerate the knobs, keep what fits, rank; the smallest
// cluster that fits; the longest sequence that fits; sweeps over sequence length.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::search {

struct RankedPlan {
  PlanSpec plan;
  costmodel::Estimate estimate;
};

struct Rejected {
  Knobs knobs;
  std::string reason;  // from the estimate ("GPU memory: needs ...") or the plan rules
};

struct SearchResult {
  std::vector<RankedPlan> feasible;  // best first: tokens/s, then less memory, then cheaper
  std::vector<Rejected> rejected;
  int64_t evaluated = 0;
};

// Every knob combination worth trying for `base` (sp over valid degrees, ZeRO 0-3, offloads,
// checkpointing, tiling, micro batch 1/2/4); combinations the plan rules forbid are left out.
std::vector<Knobs> candidate_knobs(const PlanSpec& base);

// Evaluates every candidate at base.seq_len. `keep_rejected` records why each one failed.
SearchResult search_plans(const PlanSpec& base, bool keep_rejected);

// True when `a` ranks before `b` (tokens/s desc, then peak memory asc, then $/Mtok asc).
bool ranks_before(const RankedPlan& a, const RankedPlan& b);

// The smallest GPU count (1, 2, 4, then whole nodes) at which some plan fits, up to `max_gpus`.
std::optional<int64_t> smallest_fitting_gpus(const PlanSpec& base, int64_t max_gpus);

// The longest sequence the max-seq searches try: 64M tokens, beyond any published Ulysses run
// (15M, ALST).
inline constexpr int64_t kMaxSearchedSeqLen = int64_t{64} << 20;

// Longest sequence (multiple of `granularity` tokens, at most kMaxSearchedSeqLen) that fits with
// the knobs fixed; 0 if none.
int64_t max_seq_fixed(const PlanSpec& base, int64_t granularity);

// Longest sequence over every candidate knob set; the plan that reaches it (seq_len set).
std::optional<RankedPlan> max_seq_searched(const PlanSpec& base, int64_t granularity);

}  // namespace spplan::search
