// Why a plan's parallel layout won: where its Ulysses and ring groups sit, what their traffic
// costs, and how the best plan of each other layout (Ulysses only, ring only, hybrid) compares.
#pragma once

#include <string>

#include "planner/search/search.hpp"

namespace spplan::search {

// The layout of one plan in words, e.g. "sp 8 inside a node, cp 4 across nodes: all-to-all on
// NVLink, ring hops on the network 100% hidden behind attention"; "no sequence parallelism" for
// sp = cp = 1.
std::string layout_text(const RankedPlan& plan);

// One line: the leading plan's layout_text, then each other layout family's best tokens/s in
// `result.feasible` or that none of it fits. "" when nothing fits.
std::string layout_reason(const SearchResult& result);

}  // namespace spplan::search
