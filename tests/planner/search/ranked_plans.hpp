// What the ranking tests of the search start from: a priced plan made by hand.
#pragma once

#include "planner/search/search.hpp"

namespace spplan::search::testing_ranked {

// A plan of `tokens_per_s` that leaves `free_pct` of the device free, its memory held against a
// measured error of `error_pct`, its optimizer offloaded or not.
inline RankedPlan ranked(double tokens_per_s, double free_pct, double error_pct, bool offload_optimizer = false) {
  RankedPlan p;
  p.plan.knobs.offload_optimizer = offload_optimizer ? OffloadDevice::kCpu : OffloadDevice::kNone;
  p.plan.memory_error_pct = error_pct;
  p.estimate.fits = true;
  p.estimate.tokens_per_s = tokens_per_s;
  p.estimate.capacity_bytes = 100e9;
  p.estimate.memory.params_bytes = (100.0 - free_pct) * 1e9;
  return p;
}

}  // namespace spplan::search::testing_ranked
