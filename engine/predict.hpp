// What the costmodel predicts for the run the engine is about to make, for the report's
// "predicted_*" fields. The one place the engine calls planner/costmodel.
//
// The engine runs fp32 on this machine's CPU, so the plan is priced on a "host" accelerator: the
// gpu preset "cpu-host" when configs/gpus/cpu-host.toml exists (what `spplan calibrate --out` can
// write), else a spec with no CUDA context, NCCL or fragmentation overheads and no known speed, in
// which case predicted_step_time_s is absent (null).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "planner/config/plan_spec.hpp"

namespace spplan::engine {

struct Prediction {
  std::optional<double> peak_memory_bytes;
  std::optional<double> host_memory_bytes;  // per rank: the node's offloaded state / ranks on it
  std::optional<double> step_time_s;
  std::map<std::string, double> memory_bytes;  // the costmodel's categories: "params_bytes", ...
  std::string machine;                         // which accelerator spec priced it
};

// REQUIRES: check_plan(plan) is ok; plan.cluster.num_gpus is the world size.
// `calibrated`: a spec measured by `spplan-engine calibrate` to price the plan with instead of the
// "cpu-host" preset (validate engine --calibration); its step time is then always given.
Prediction predict(const PlanSpec& plan, const GpuSpec* calibrated = nullptr);

}  // namespace spplan::engine
