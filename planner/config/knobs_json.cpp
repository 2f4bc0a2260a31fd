#include "planner/config/knobs_json.hpp"

namespace spplan {

nlohmann::json knobs_json(const Knobs& k) {
  return {{"sp", k.sp},
          {"cp", k.cp},
          {"cp_comm", to_string(k.cp_comm)},
          {"zero_stage", k.zero_stage},
          {"offload_optimizer", to_string(k.offload_optimizer)},
          {"offload_params", to_string(k.offload_params)},
          {"act_ckpt", to_string(k.act_ckpt)},
          {"tiled_mlp", k.tiled_mlp},
          {"tiled_loss", k.tiled_loss},
          {"micro_batch", k.micro_batch},
          {"grad_accum_steps", k.grad_accum_steps},
          {"precision", to_string(k.precision)},
          {"sp_comm_dtype", to_string(k.sp_comm_dtype)}};
}

}  // namespace spplan
