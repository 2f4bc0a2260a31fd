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

// A model with attention sinks (gpt-oss) runs flex_attention without a sequence split (sp 1, cp 1).
Status check_attention_sinks(const PlanSpec& plan, const WhereFn& where);

// A sequence longer than the model's sliding window runs where the stack windows it: FlashAttention
// with the window, and over a ring only where the ring windows each query at its place in the
// sequence (TrainingStack::ring_sliding_window) over shards longer than the window where the stack
// asks it. Part of check_plan.
Status check_sliding_window(const PlanSpec& plan, const WhereFn& where);

// The constraints of DESIGN.md that hold for every trainer: heads % sp, kv rule, sp <= world,
// world % sp, the ring's zigzag split, ZeRO stage and offload combinations (param offload needs
// ZeRO-3; optimizer offload needs ZeRO >= 1), NVMe offload needs drives, whole nodes.
Status check_plan_shape(const PlanSpec& plan, const WhereFn& where);

// check_plan_shape and what the plan's trainer runs (trainer_rules.hpp check_trainer_runs: its
// layouts, whether it pads a sequence sp does not divide, its refusals).
Status check_plan(const PlanSpec& plan, const WhereFn& where);

// The cluster's shape: a count above one node is a whole number of nodes, so the node count priced
// is the one the exports launch (torchrun starts the same process count on every node).
Status check_cluster_shape(const ClusterSpec& cluster, const WhereFn& where);

// FlashAttention 2 has fp16/bf16 kernels only: an fp32 plan runs SDPA. Refuses fp32 with flash2.
Status check_attention_precision(const PlanSpec& plan, const WhereFn& where);

// As every reader of a plan applies them: the layout's kernel (trainer_rules.hpp) unless the user
// named one (`named`: an --attention flag or a plan file's attention key), then the check above.
Status settle_attention(PlanSpec* plan, bool named, const WhereFn& where);

}  // namespace spplan
