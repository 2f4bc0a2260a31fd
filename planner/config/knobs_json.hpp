// The knobs as JSON, one object for every report that shows them: the CLI's `--json` plans and the
// engine's run settings (run log and `run --json`).
#pragma once

#include <nlohmann/json.hpp>

#include "planner/config/knobs.hpp"

namespace spplan {

// {"sp", "cp", "cp_comm", "zero_stage", "offload_optimizer", "offload_params", "act_ckpt",
//  "tiled_mlp", "tiled_loss", "micro_batch", "grad_accum_steps", "precision", "sp_comm_dtype"}.
nlohmann::json knobs_json(const Knobs& knobs);

}  // namespace spplan
