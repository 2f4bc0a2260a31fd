// PlanSpec: everything one evaluation needs: model + cluster + sequence length + knobs.
// What `plan --out` writes and `estimate`, `simulate`, `export` and `run` read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/document_pieces.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/trainer_spec.hpp"

namespace spplan {

// The training loops spplan knows by name: the records under configs/trainers (trainer_spec.hpp),
// sorted: "arctic" (ArcticTraining, the default), "engine", "hf", "liger", "megatron", "torchtitan".
std::vector<std::string> trainer_names();
// The stack of a preset record, for code that names one it ships ("engine": the engine's own run).
// REQUIRES: name is one of trainer_names() (a missing configs folder is an installation error:
// the program stops with one line).
TrainingStack trainer_stack(const std::string& name);

struct PlanSpec {
  ModelSpec model;
  ClusterSpec cluster;
  int64_t seq_len = 0;  // tokens per sequence (global, before SP sharding)
  Knobs knobs;
  OptimizerSpec optimizer;  // [optimizer]: optional in files (absent: the defaults)
  // The [optimizer] keys the plan file gave: what a --resume holds against the checkpoint's
  // settings (the others are taken from the checkpoint).
  std::vector<std::string> optimizer_keys_in_file;
  TrainingStack stack;
  // The attention kernel was named (--attention, a plan file's attention key): the layout's kernel
  // (trainer_rules.hpp settle_layout_attention) does not replace it.
  bool attention_named = false;
  // Documents packed into each sequence, positions restarting and attention masked at their ends
  // (the engine's --eos-id, plan --lengths with a packing; a plan file's documents.packed): the
  // costmodel prices the position ids.
  bool packed_documents = false;
  // What the sequences hold, as a packing of the user's corpus cut it (plan --lengths; the
  // engine's --data with --eos-id): attention is priced per document where the trainer's record
  // says how it runs them (TrainingStack::packed_attention), and an epoch is pieces.sequences
  // sequences. Empty: each sequence one document of seq_len tokens. A plan file keeps them in its
  // [documents] table (plan_documents_toml.hpp).
  DocumentPieces documents;
  // The share of device memory a plan must leave free (--headroom PCT / 100; not a plan-file key):
  // a renter's margin beyond the planner's own, 0 to 0.5.
  double memory_headroom = 0;
  // The largest GPU-memory error the planner measured for this plan's trainer on its GPU, % of the
  // device (planner/accuracy hold_against_measured; not a plan-file key; 0: nothing measured). Inside
  // a noise band the searches rank a plan that leaves more memory free than this before one that
  // leaves less: the one that may not fit when it runs.
  double memory_error_pct = 0;

  // Data-parallel degree: GPUs = dp x sp x cp.
  int64_t dp() const { return cluster.num_gpus / (knobs.sp * knobs.cp); }
  // The plan freezes a multimodal model's encoders: the stack's choice (TrainingStack::freezes_encoders)
  // holds only for a model that has them.
  bool encoders_frozen() const { return model.has_encoders() && stack.freezes_encoders; }
};

}  // namespace spplan
