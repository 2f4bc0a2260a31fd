// The knob flags of the searching commands (plan, fit, max-seq): each flag given fixes that knob
// and the search varies the rest (`plan --zero 2 --offload-params none`).
#pragma once

#include <nlohmann/json.hpp>

#include "planner/config/plan_spec.hpp"
#include "planner/core/args.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {

// Reads the knob flags present in `args`: the knobs the search enumerates become constraints, the
// others (precision, grad accumulation, comm dtype, buckets) are set on base->knobs. The attention
// follows the precision unless --attention names one (fp32 runs SDPA). Errors: a bad flag value,
// an sp the model's heads or the GPU count refuse, or flash2 with fp32, each one line.
Result<search::KnobConstraints> read_constraints(const Args& args, PlanSpec* base);

// knob_flag_specs() with the defaults a search has: the knobs it enumerates say "searched".
std::vector<FlagSpec> searched_knob_flag_specs();

// One line per limit hit, with the count and the closest miss: "GPU memory: 1842 knob sets (the
// closest, sp=8 ..., needs 95.1 GiB, has 79.6 GiB)", then the trainer's exclusions.
std::vector<std::string> rejection_lines(const search::SearchResult& result);

// Why a search priced nothing, one line: the trainer's most frequent exclusion (its key, value
// and what is allowed), or, with none, that the fixed knob flags leave no knob set.
Status no_candidate_status(const search::SearchResult& result, const PlanSpec& base);

// The same as a JSON array of {"limit", "count", "closest_knobs", "closest_reason"}.
nlohmann::json rejections_json(const search::SearchResult& result);

}  // namespace spplan::cli
