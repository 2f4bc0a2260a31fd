#include "engine/run/lr_schedule.hpp"

#include <algorithm>
#include <numbers>
#include <cmath>

namespace spplan::engine {

double lr_at(const OptimizerSpec& o, int64_t step, int64_t total_steps) {
  if (step < o.warmup_steps) return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup_steps);
  const double decay_steps = static_cast<double>(std::max<int64_t>(1, total_steps - o.warmup_steps));
  const double p = std::min(1.0, static_cast<double>(step - o.warmup_steps) / decay_steps);
  switch (o.lr_schedule) {
    case LrSchedule::kConstant: return o.lr;
    case LrSchedule::kCosine: return o.min_lr + (o.lr - o.min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * p));
    case LrSchedule::kLinear: return o.min_lr + (o.lr - o.min_lr) * (1.0 - p);
  }
  return o.lr;
}

}  // namespace spplan::engine
