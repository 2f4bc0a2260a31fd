// The rules a plan must obey before any cost is computed (Ulysses and ZeRO constraints).
// `where(key)` names the source of a value in messages: a flag ("--sp") or a file key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

using WhereFn = std::function<std::string(const std::string& key)>;

// Where names come from command-line flags: key "sp" -> "--sp".
std::string flag_where(const std::string& key);

// Checks the model on its own (positive sizes, heads divisible by kv heads).
Status check_model(const ModelSpec& model, const std::string& source);

// SP degrees valid for this model on `num_gpus` GPUs: divisors of num_gpus that divide the query
// heads and either divide or are divided by the KV heads.
std::vector<int64_t> valid_sp_degrees(const ModelSpec& model, int64_t num_gpus);

// Ring-attention degrees valid with Ulysses degree `sp` on `num_gpus` GPUs: the divisors of
// num_gpus / sp (ring attention has no head rule). Empty when sp does not divide num_gpus.
std::vector<int64_t> valid_cp_degrees(int64_t num_gpus, int64_t sp);

// The ring degree cp: sp x cp divides the GPUs, and with cp > 1 the sequence is a multiple of
// 2 x sp x cp (the zigzag split). Part of check_plan.
Status check_context_parallel(const PlanSpec& plan, const WhereFn& where);

// Ring attention through Accelerate's context parallel (FSDP2): ring only (sp 1), ZeRO 2 or 3,
// and offload of both parameters and optimizer or of neither. OK for cp 1.
Status check_accelerate_context_parallel(const PlanSpec& plan, const WhereFn& where);

// Which trainers run cp > 1: not "arctic" (Ulysses only); "hf" and "liger" through Accelerate
// (check_accelerate_context_parallel); "engine" by its own rule in check_trainer_runs.
Status check_trainer_context_parallel(const PlanSpec& plan, const WhereFn& where);

// All constraints of DESIGN.md: heads % sp, kv rule, sp <= world, world % sp, ZeRO stage and
// offload combinations (param offload needs ZeRO-3; optimizer offload needs ZeRO >= 1).
// seq_len need not divide by sp: the engine pads with ignored labels (DESIGN.md).
Status check_plan(const PlanSpec& plan, const WhereFn& where);

// The cluster's shape: a count above one node is a whole number of nodes, so the node count priced
// is the one the exports launch (torchrun starts the same process count on every node).
Status check_cluster_shape(const ClusterSpec& cluster, const WhereFn& where);

// What the named trainer cannot run, as rules: ring attention (check_trainer_context_parallel),
// and for "engine" what spplan run refuses (NVMe offload, ZeRO-3 without checkpointing, parameter
// offload without optimizer offload; spplan run checks every plan on the engine stack with them,
// engine/run/options.cpp check_run_options).
Status check_trainer_runs(const PlanSpec& plan, const WhereFn& where);

// FlashAttention 2 has fp16/bf16 kernels only: an fp32 plan runs SDPA. Refuses fp32 with flash2.
Status check_attention_precision(const PlanSpec& plan, const WhereFn& where);

// The attention a plan runs when none was named: the stack's, except SDPA for fp32 (above).
void pick_attention_for_precision(PlanSpec* plan);

// Both, as every reader of a plan applies them: the pick unless the user named the kernel
// (`named`: an --attention flag or a plan file's attention key), then the check.
Status settle_attention(PlanSpec* plan, bool named, const WhereFn& where);

}  // namespace spplan
