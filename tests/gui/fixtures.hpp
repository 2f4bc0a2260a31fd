// The plan and inputs the GUI tests share: qwen3-4b on 4x h100-80gb at 128k.
#pragma once

#include "gui/gui_options.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::gui::testing {

inline PlanSpec knownBase() {
  PlanSpec base;
  base.model = *load_model("qwen3-4b");
  base.cluster.gpu = *load_gpu("h100-80gb");
  base.cluster.num_gpus = 4;
  base.seq_len = 128 * 1024;
  return base;
}

// The same plan as the GUI's inputs.
inline GuiOptions knownOptions() {
  GuiOptions options;
  options.model = "qwen3-4b";
  options.gpu = "h100-80gb";
  options.gpus = "4";
  options.seq = "128k";
  return options;
}

}  // namespace spplan::gui::testing
