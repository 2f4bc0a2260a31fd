// The knob flags of the searching commands (plan, fit, max-seq, rent) and the GUI's pinned knobs:
// each knob given fixes it and the search varies the rest (`plan --zero 2 --offload-params none`).
#pragma once

#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/args.hpp"
#include "planner/core/status.hpp"
#include "planner/search/search.hpp"

namespace spplan::search {

// Reads the knob flags present in `args`: the knobs the search enumerates become constraints, the
// others (precision, grad accumulation, comm dtype, buckets) are set on base->knobs. The attention
// follows the precision unless --attention names one (fp32 runs SDPA). Errors: a bad flag value,
// an sp the model's heads or the GPU count refuse, flash2 with fp32, or a refusal of the trainer
// that holds on every layout the flags leave whatever the search varies (the model's experts on
// axolotl, a named kernel on hf's ring), each one line. `gpus_vary`: the caller searches other GPU
// counts than base's (rent), so the layouts at base's count are not all it tries.
Result<KnobConstraints> read_constraints(const Args& args, PlanSpec* base, bool gpus_vary = false);

// The largest --global-batch: 2^20 sequences per step, far past any published recipe.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 20;

// knob_flag_specs() with the defaults a search has: the knobs it enumerates say "searched"; then
// --global-batch (KnobConstraints::global_batch) and --risky, the ranking's switch
// (KnobConstraints::ranking).
std::vector<FlagSpec> searched_knob_flag_specs();

// Why a search priced nothing, one line: the trainer's most frequent exclusion (its key, value
// and what is allowed), or, with none, a plan rule the base plan breaks whatever its knobs, or
// that the fixed knobs leave no knob set.
Status no_candidate_status(const SearchResult& result, const PlanSpec& base);

}  // namespace spplan::search
