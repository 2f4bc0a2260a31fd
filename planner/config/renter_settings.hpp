// A renter's settings that a plan is priced and held with: what a GPU (or a node) costs an hour,
// and the share of GPU memory a plan must leave free. The CLI's flags (--price-per-gpu-hour,
// --price-per-node-hour, --headroom) and the GUI's fields read them here, so both take the same
// values and refuse the others with the same words.
#pragma once

#include <optional>
#include <string>

#include "planner/config/plan_spec.hpp"
#include "planner/config/setting_ranges.hpp"
#include "planner/core/status.hpp"

namespace spplan {

// The largest headroom a plan may ask for, % of the device: beyond half, no plan the searches
// price is worth renting for.
inline constexpr double kMaxHeadroomPct = 50;

// The settings' ranges: the flags, the GUI's fields and a GPU file's price_per_gpu_hour
// (gpu_loader.cpp) read them alike. A price of 0 is a machine already paid for: what
// `spplan calibrate` writes for the machine it measured.
struct RenterRanges {
  NumberRange price_per_hour{0.0, kMaxNumber};  // per GPU-hour or per node-hour, in $
  NumberRange headroom_pct{0.0, kMaxHeadroomPct};
};
inline constexpr RenterRanges kRenterRanges{};

// The price per GPU-hour or per node-hour, as typed (nullopt: not given; at most one of them), into
// gpu->price_per_gpu_hour. A node's price is shared by its GPUs: set gpus_per_node first. Neither
// keeps the GPU file's price.
Status apply_price(const std::optional<std::string>& per_gpu_hour, const std::optional<std::string>& per_node_hour,
                   GpuSpec* gpu);

// The headroom in % of the device, as typed, into plan->memory_headroom.
Status apply_headroom(const std::string& pct, PlanSpec* plan);

}  // namespace spplan
