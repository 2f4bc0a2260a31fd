// "What to rent": the same model, sequence and trainer on every GPU preset and node shape (1, 2
// and 4 nodes of the preset's GPUs per node, or the counts asked for). Each option holds the best plan at the sequence
// (search_plans, as `spplan plan` ranks) and the longest sequence any knob set fits
// (max_seq_searched, as `spplan max-seq`). One computation for `spplan rent` and the GUI's
// What-to-rent tab (gui/rent_model.hpp), so both answer alike.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/search/search.hpp"

namespace spplan::search {

inline constexpr int64_t kRentMaxSeqGranularity = 1024;  // as `spplan max-seq`: whole k-tokens

// What the table spans: node counts of each preset, and the renter's own $ per GPU-hour for some
// presets (by name) in place of the preset's list price.
struct RentShapes {
  std::vector<int64_t> nodes = {1, 2, 4};
  std::map<std::string, double> price_per_gpu_hour;
  // The measured errors each preset's plans are ranked against (hold_against_measured); null:
  // the base plan's memory_error_pct for its own GPU, none for the others.
  const MeasuredAccuracy* accuracy = nullptr;
};

struct RentOption {
  std::string gpu;        // preset name
  std::string measured_as;  // the preset whose measured accuracy holds for it (GpuSpec::measured_as)
  int64_t nodes = 0;
  int64_t gpus = 0;       // nodes x the preset's gpus_per_node
  std::optional<RankedPlan> best;  // at base.seq_len; empty when nothing fits
  int64_t max_seq = 0;    // longest sequence any knob set fits (0: none)
  bool own = false;       // the base plan's own GPU and count (rent_options_with_own)
};

struct RentTable {
  std::vector<RentOption> options;  // preset order (gpu_presets()), then node shape
  // Index of the lowest $/Mtok and of the highest tokens/s among options that fit (-1: none); under
  // Ranking::kSafeFirst among the options whose best plan is safe (is_safe) when there are any.
  int cheapest = -1;
  int fastest = -1;
};

// Every preset x node shape for `base`'s model, seq_len, knob constraints and stack, priced at the
// shapes' prices where given. A preset file that does not load is skipped (it is reported where it
// is chosen).
RentTable rent_options(const PlanSpec& base, const KnobConstraints& constraints = {}, const RentShapes& shapes = {});

// rent_options plus the base plan's own shape (its GPU spec and num_gpus, e.g. 4 GPUs: not a whole
// number of nodes) as a row marked `own` when no preset row has that GPU and count already (then
// that row is marked). What the user has is compared with what they could rent.
RentTable rent_options_with_own(const PlanSpec& base, const KnobConstraints& constraints = {},
                                const RentShapes& shapes = {});

}  // namespace spplan::search
