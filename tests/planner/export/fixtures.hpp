// What the export tests of one trainer start from: Llama 3.1 8B on H100s, on that trainer.
#pragma once

#include <cstdint>
#include <string>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"

namespace spplan::testing_export {

// The caller sets the knobs, then settle_layout_attention picks the layout's kernel.
inline PlanSpec llama8b_on(const std::string& trainer, int64_t gpus, int64_t seq) {
  PlanSpec p;
  p.model = *load_model("llama-3.1-8b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = gpus;
  p.seq_len = seq;
  p.stack = *load_trainer(trainer);
  return p;
}

}  // namespace spplan::testing_export
