// What the searching commands (plan, fit, max-seq, rent) print of a search's rejections. The knob
// flags they read are planner/search/knob_constraints.hpp's.
#pragma once

#include <nlohmann/json.hpp>

#include "planner/search/knob_constraints.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {

// One line per limit hit, with the count and the closest miss: "GPU memory: 1842 knob sets (the
// closest, sp=8 ..., needs 95.1 GiB, has 79.6 GiB)", then the trainer's exclusions.
std::vector<std::string> rejection_lines(const search::SearchResult& result);

// The same as a JSON array of {"limit", "count", "closest_knobs", "closest_reason"}.
nlohmann::json rejections_json(const search::SearchResult& result);

}  // namespace spplan::cli
