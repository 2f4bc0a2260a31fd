// PlanSpec: everything one evaluation needs: model + cluster + sequence length + knobs.
// What `plan --out` writes and `estimate`, `simulate`, `export` and `run` read.
#pragma once

#include <cstdint>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"

namespace spplan {

// What the training stack keeps of ZeRO-3's gathered parameters. The defaults are DeepSpeed's:
// a gathered parameter stays while it is reused within stage3_max_reuse_distance elements and
// fewer than stage3_max_live_parameters are gathered (both 1e9), and parameters below
// stage3_param_persistence_threshold (1e5) elements stay gathered always (DeepSpeed
// zero/config.py, MEMORY-FACTS 1.1, 2.1, 2.2). spplan-engine keeps neither (engine/predict.cpp).
struct Zero3Retention {
  double reuse_window_elems = 1e9;
  double persistence_threshold_elems = 1e5;
};

struct PlanSpec {
  ModelSpec model;
  ClusterSpec cluster;
  int64_t seq_len = 0;  // tokens per sequence (global, before SP sharding)
  Knobs knobs;
  Zero3Retention zero3;  // the stack's behaviour, not a knob: DeepSpeed unless the engine predicts itself

  int64_t dp() const { return cluster.num_gpus / knobs.sp; }  // data-parallel degree
};

}  // namespace spplan
