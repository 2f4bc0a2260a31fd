// PlanSpec: everything one evaluation needs: model + cluster + sequence length + knobs.
// What `plan --out` writes and `estimate`, `simulate`, `export` and `run` read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/config/optimizer_spec.hpp"

namespace spplan {

// What the training software does that changes memory and is not a knob. The defaults describe
// DeepSpeed under ArcticTraining, what ALST runs; `--trainer hf` (trainer_stack) describes Hugging
// Face Trainer / TRL on DeepSpeed; spplan-engine predicts itself with its own values
// (engine/predict.cpp).
struct TrainingStack {
  std::string trainer = "arctic";  // the name it goes by (trainer_names), written to plan files
  // ZeRO-3 keeps a gathered parameter while it is reused within stage3_max_reuse_distance
  // elements and fewer than stage3_max_live_parameters are gathered (both 1e9), and parameters
  // below stage3_param_persistence_threshold (1e5) elements gathered always (DeepSpeed
  // zero/config.py, MEMORY-FACTS 1.1, 2.1, 2.2).
  double zero3_reuse_window_elems = 1e9;
  double zero3_persistence_threshold_elems = 1e5;
  // ArcticTraining's loop holds the model outputs (the logits) until backward returns
  // (MEMORY-FACTS 10.5); Hugging Face Trainer drops them before backward.
  bool loop_holds_logits = true;
  // With act_ckpt offload, DeepSpeed's checkpoint offload keeps at most max_fwd_stash_count (2) +
  // keep_last_count (1) layer inputs on the GPU (offload_activations.py, MEMORY-FACTS 8.1).
  int64_t offloaded_checkpoints_on_device = 3;
};

// The training loops spplan knows by name: "arctic" (ArcticTraining, the default), "hf".
const std::vector<std::string>& trainer_names();
// The stack of trainer_names()[index]. "hf" differs from "arctic" in one rule: Trainer's
// training_step returns the loss only, so the logits are freed before backward.
TrainingStack trainer_stack(size_t index);

struct PlanSpec {
  ModelSpec model;
  ClusterSpec cluster;
  int64_t seq_len = 0;  // tokens per sequence (global, before SP sharding)
  Knobs knobs;
  OptimizerSpec optimizer;  // [optimizer]: optional in files (absent: the defaults)
  TrainingStack stack;

  int64_t dp() const { return cluster.num_gpus / knobs.sp; }  // data-parallel degree
};

}  // namespace spplan
