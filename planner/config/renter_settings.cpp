#include "planner/config/renter_settings.hpp"

#include "planner/core/parse.hpp"

namespace spplan {

Status apply_price(const std::optional<std::string>& per_gpu_hour, const std::optional<std::string>& per_node_hour,
                   GpuSpec* gpu) {
  if (per_gpu_hour && per_node_hour) {
    return Status::invalid("--price-per-node-hour: not allowed with --price-per-gpu-hour (allowed: one of them)");
  }
  if (per_gpu_hour) {
    SPPLAN_ASSIGN_OR_RETURN(gpu->price_per_gpu_hour, parse_in("--price-per-gpu-hour", *per_gpu_hour, kRenterRanges.price_per_hour));
  }
  if (per_node_hour) {
    SPPLAN_ASSIGN_OR_RETURN(const double node, parse_in("--price-per-node-hour", *per_node_hour, kRenterRanges.price_per_hour));
    gpu->price_per_gpu_hour = node / static_cast<double>(gpu->gpus_per_node);
  }
  return Status::ok();
}

Status apply_headroom(const std::string& pct, PlanSpec* plan) {
  SPPLAN_ASSIGN_OR_RETURN(const double value, parse_in("--headroom", pct, kRenterRanges.headroom_pct));
  plan->memory_headroom = value / 100.0;
  return Status::ok();
}

}  // namespace spplan
