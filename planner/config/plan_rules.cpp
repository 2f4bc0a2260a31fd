#include "planner/config/plan_rules.hpp"

#include <algorithm>

#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

// Ulysses shards query heads over P ranks; KV heads are either sharded (n_kv % P == 0) or
// replicated P / n_kv times (P % n_kv == 0) (DeepSpeed UlyssesSPAttentionHF).
bool sp_fits_heads(const ModelSpec& m, int64_t sp) {
  return m.num_attention_heads % sp == 0 && (m.num_key_value_heads % sp == 0 || sp % m.num_key_value_heads == 0);
}

}  // namespace

std::string flag_where(const std::string& key) {
  std::string flag = "--" + key;
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  if (key == "zero_stage") return "--zero";
  if (key == "seq_len") return "--seq";
  if (key == "num_gpus") return "--gpus";
  return flag;
}

Status check_model(const ModelSpec& m, const std::string& source) {
  // head_dim defaults to hidden_size / num_attention_heads, which is 0 for a narrow model.
  if (m.head_dim < 1) {
    return Status::invalid(source + ": key \"head_dim\": missing, and hidden_size " + std::to_string(m.hidden_size) +
                           " / num_attention_heads " + std::to_string(m.num_attention_heads) +
                           " is below 1 (allowed: a head_dim of at least 1)");
  }
  if (m.is_moe()) {  // config.json or a TOML file: the experts' keys must describe a mixture
    if (m.experts_per_token < 1 || m.experts_per_token > m.num_experts) {
      return Status::invalid(source + ": key \"num_experts_per_tok\": value " + std::to_string(m.experts_per_token) +
                             (m.experts_per_token < 1 ? " (missing)" : "") + " with " + std::to_string(m.num_experts) +
                             " experts (allowed: 1 to " + std::to_string(m.num_experts) + ")");
    }
    if (m.moe_intermediate_size < 1) {
      return Status::invalid(source + ": key \"moe_intermediate_size\": missing for " + std::to_string(m.num_experts) +
                             " experts (allowed: each expert's SwiGLU width, at least 1)");
    }
    if (m.router_sigmoid && (m.num_experts % m.router_groups != 0 || m.router_topk_groups > m.router_groups ||
                             m.experts_per_token > m.num_experts / m.router_groups * m.router_topk_groups)) {
      return Status::invalid(source + ": key \"n_group\": value " + std::to_string(m.router_groups) + " with topk_group " +
                             std::to_string(m.router_topk_groups) + ", " + std::to_string(m.num_experts) + " experts and " +
                             std::to_string(m.experts_per_token) + " a token (allowed: a divisor of the experts, at least "
                             "topk_group, whose chosen groups hold num_experts_per_tok experts)");
    }
    if (m.router_sigmoid && m.output_router_logits) {
      return Status::invalid(source + ": key \"output_router_logits\": value true with a sigmoid router (allowed: false: "
                             "GLM-4.5's model computes no load-balancing loss, Glm4MoeForCausalLM)");
    }
    if (m.first_dense_layers >= m.num_hidden_layers) {
      return Status::invalid(source + ": key \"first_k_dense_replace\": value " + std::to_string(m.first_dense_layers) +
                             " leaves no mixture layer of " + std::to_string(m.num_hidden_layers) +
                             " (allowed: 0 to num_hidden_layers - 1)");
    }
  } else {
    // A mixture's parts without its experts: a TOML file of model_type "glm4_moe" or "gpt_oss"
    // that gives no experts would price a dense MLP with a router's or experts' extras.
    const char* part = m.first_dense_layers > 0 ? "first_k_dense_replace"
                       : m.shared_expert_intermediate_size > 0 ? "n_shared_experts"
                       : m.router_sigmoid ? "router_sigmoid"
                       : m.router_groups != 1 || m.router_topk_groups != 1 ? "n_group"
                       : m.expert_biases ? "expert_biases"
                       : m.router_softmax_after_topk ? "router_softmax_after_topk" : nullptr;
    if (part != nullptr) {
      return Status::invalid(source + ": key \"" + part + "\": a mixture's, given without experts (allowed: with "
                             "num_experts of 2 or more, or absent)");
    }
  }
  if (!(m.partial_rotary_factor > 0 && m.partial_rotary_factor <= 1)) {
    return Status::invalid(source + ": key \"partial_rotary_factor\": value " + format_number(m.partial_rotary_factor) +
                           " is not allowed (allowed: a number above 0, at most 1)");
  }
  if (m.num_attention_heads % m.num_key_value_heads != 0) {
    return Status::invalid(source + ": key \"num_key_value_heads\": value " + std::to_string(m.num_key_value_heads) +
                           " does not divide num_attention_heads " + std::to_string(m.num_attention_heads) +
                           " (allowed: a divisor of num_attention_heads)");
  }
  // A model file's layers of full attention beside windowed ones: fewer than all layers, and only
  // with a window.
  if (m.full_attention_layers > 0 && (m.sliding_window == 0 || m.full_attention_layers >= m.num_hidden_layers)) {
    return Status::invalid(source + ": key \"full_attention_layers\": value " + std::to_string(m.full_attention_layers) +
                           (m.sliding_window == 0 ? " without a sliding_window" : " of " + std::to_string(m.num_hidden_layers) + " layers") +
                           " (allowed: 1 to num_hidden_layers - 1 beside a sliding_window, or 0)");
  }
  return Status::ok();
}

std::vector<int64_t> valid_sp_degrees(const ModelSpec& model, int64_t num_gpus) {
  std::vector<int64_t> out;
  for (int64_t p = 1; p <= num_gpus; ++p) {
    if (num_gpus % p == 0 && sp_fits_heads(model, p)) out.push_back(p);
  }
  return out;
}

Status check_plan(const PlanSpec& plan, const WhereFn& where) {
  SPPLAN_RETURN_IF_ERROR(check_plan_shape(plan, where));
  return check_trainer_runs(plan, where);
}

// A window shorter than the sequence changes which keys a query sees. It is priced (each query
// attends to its last w keys: costmodel/compute.hpp causal_pairs) where the stack hands the window
// to a FlashAttention kernel; a stack that runs full causal attention (the engine) would train
// another model, and SDPA would get the window as a dense [q, kv] mask (transformers masking_utils:
// no flash kernel, O(s^2) memory), not priced. A ring runs it only where it windows each query at
// its place in the whole sequence (TrainingStack::ring_sliding_window), and, where it tests its
// shard against the window, over shards longer than the window.
Status check_sliding_window(const PlanSpec& plan, const WhereFn& where) {
  const ModelSpec& m = plan.model;
  if (m.sliding_window <= 0 || plan.seq_len <= m.sliding_window) return Status::ok();
  const std::string longer = where("seq_len") + ": value " + std::to_string(plan.seq_len) + " is longer than " + m.name +
                             "'s sliding_window " + std::to_string(m.sliding_window);
  const std::string inside = "at most " + std::to_string(m.sliding_window) + " tokens";
  const std::string trainer = "trainer \"" + plan.stack.trainer + "\"";
  if (!plan.stack.sliding_window_attention) {
    return Status::invalid(longer + ", and " + trainer + " runs full causal attention (allowed: " + inside +
                           ", or a trainer that runs the window)");
  }
  if (plan.stack.attention == AttentionKernel::kSdpa && !plan.stack.window_in_masked_blocks) {
    return Status::invalid(longer + ", which SDPA runs through a dense [q, kv] mask, not priced (allowed: " + inside +
                           ", or --attention flash2, flash3 or flex)");
  }
  const int64_t cp = plan.knobs.cp;
  if (cp > 1 && !plan.stack.ring_sliding_window) {
    return Status::invalid(longer + ", and " + trainer + "'s ring does not window each query at its place in the sequence (allowed: " +
                           inside + ", or cp 1)");
  }
  if (cp > 1 && plan.stack.ring_window_past_shard_only && plan.seq_len / cp <= m.sliding_window) {
    return Status::invalid(where("cp") + ": value " + std::to_string(cp) + " leaves " + std::to_string(plan.seq_len / cp) +
                           " tokens a rank, not more than " + m.name + "'s sliding_window " + std::to_string(m.sliding_window) +
                           ", where " + trainer + "'s ring runs no window (allowed: cp at most " +
                           std::to_string(std::max<int64_t>(1, (plan.seq_len - 1) / m.sliding_window)) + ")");
  }
  return Status::ok();
}

// gpt-oss's sink logit per head (docs/research/issue42-moe.md 7): of transformers 5.24's kernels
// only flex_attention trains it at long context (FlashAttention 4 from 4.0.0b26 too, not priced):
// flash_attention_2 and 3 run the Hub's vllm-flash-attn3, whose backward leaves the sinks frozen,
// and sdpa is refused for gpt-oss. Neither sequence split runs them: DeepSpeed's Ulysses hands
// every head's sinks to each rank's heads (and accelerate refuses flex under sequence parallel),
// torch's context parallel runs SDPA only.
Status check_attention_sinks(const PlanSpec& plan, const WhereFn& where) {
  const ModelSpec& m = plan.model;
  if (!m.attention_sinks) return Status::ok();
  if (plan.stack.attention != AttentionKernel::kFlex) {
    return Status::invalid(where("attention") + ": value \"" + to_string(plan.stack.attention) + "\" with " + m.name +
                           "'s attention sinks, which it does not train (allowed: flex; flash2 and flash3 run the Hub's "
                           "vllm-flash-attn3, whose backward leaves the sinks frozen, and sdpa has none)");
  }
  if (plan.knobs.sp > 1 || plan.knobs.cp > 1) {
    const bool ring = plan.knobs.cp > 1;
    return Status::invalid(where(ring ? "cp" : "sp") + ": value " + std::to_string(ring ? plan.knobs.cp : plan.knobs.sp) +
                           " with " + m.name + "'s attention sinks (allowed: 1; Ulysses hands every head's sinks to "
                           "each rank's heads, and torch's context parallel runs SDPA only)");
  }
  return Status::ok();
}

// Documents packed into a sequence on a stack whose kernel takes their boundaries as cumulative
// lengths (PackedAttention::kVarlen): SDPA has no such entry, and transformers then builds the
// documents' block-diagonal mask densely, [s, s] booleans, with the causal skip off (masking_utils.py
// create_causal_mask with find_packed_sequence_indices, transformers 5.24.0): every pair computed
// over a mask of s^2 bytes, not priced.
Status check_packed_attention(const PlanSpec& plan, const WhereFn& where) {
  if (!plan.packed_documents || plan.documents.empty() || plan.stack.attention != AttentionKernel::kSdpa) return Status::ok();
  const PackedAttention mode = plan.knobs.cp > 1 ? plan.stack.ring_packed_attention : plan.stack.packed_attention;
  if (mode != PackedAttention::kVarlen) return Status::ok();
  return Status::invalid(where("attention") + ": value \"sdpa\" with packed documents, which trainer \"" +
                         plan.stack.trainer + "\" runs through a dense [s, s] document mask, not priced (allowed: flash2, flash3 or flex)");
}

Status check_plan_shape(const PlanSpec& plan, const WhereFn& where) {
  const Knobs& k = plan.knobs;
  const ModelSpec& m = plan.model;
  if (plan.seq_len < 1) {
    return Status::invalid(where("seq_len") + ": value " + std::to_string(plan.seq_len) +
                           " is not allowed (allowed: a positive token count)");
  }
  SPPLAN_RETURN_IF_ERROR(check_sliding_window(plan, where));
  SPPLAN_RETURN_IF_ERROR(check_attention_sinks(plan, where));
  SPPLAN_RETURN_IF_ERROR(check_packed_attention(plan, where));
  if (k.sp < 1 || k.sp > plan.cluster.num_gpus || plan.cluster.num_gpus % k.sp != 0 || !sp_fits_heads(m, k.sp)) {
    return Status::invalid(where("sp") + ": value " + std::to_string(k.sp) + " is not valid for " + m.name + " (" +
                           std::to_string(m.num_attention_heads) + " heads, " + std::to_string(m.num_key_value_heads) +
                           " kv heads) on " + std::to_string(plan.cluster.num_gpus) + " GPUs (allowed sp: " +
                           join_ints(valid_sp_degrees(m, plan.cluster.num_gpus)) + ")");
  }
  SPPLAN_RETURN_IF_ERROR(check_context_parallel(plan, where));
  if (k.zero_stage < 0 || k.zero_stage > 3) {
    return Status::invalid(where("zero_stage") + ": value " + std::to_string(k.zero_stage) +
                           " is not allowed (allowed: 0, 1, 2, 3)");
  }
  if (k.offload_params != OffloadDevice::kNone && k.zero_stage != 3) {
    return Status::invalid(where("offload_params") + ": value \"" + to_string(k.offload_params) +
                           "\" needs ZeRO stage 3, found stage " + std::to_string(k.zero_stage) +
                           " (allowed with this stage: none)");
  }
  if (k.offload_optimizer != OffloadDevice::kNone && k.zero_stage == 0) {
    return Status::invalid(where("offload_optimizer") + ": value \"" + to_string(k.offload_optimizer) +
                           "\" needs ZeRO stage 1, 2 or 3, found stage 0 (allowed with this stage: none)");
  }
  for (const auto& [key, device] : {std::pair{"offload_optimizer", k.offload_optimizer},
                                    std::pair{"offload_params", k.offload_params}}) {
    if (device == OffloadDevice::kNvme && plan.cluster.gpu.nvme_GBps_per_node <= 0) {
      return Status::invalid(where(key) + ": value \"nvme\" needs NVMe drives, but " + plan.cluster.gpu.name +
                             " has nvme_GBps_per_node 0 (allowed here: none, cpu)");
    }
  }
  // TiledMLP over a mixture: each shard would route its own tokens and, under ZeRO-3, gather the
  // layer's experts again; neither is priced.
  if (k.tiled_mlp && m.is_moe()) {
    return Status::invalid(where("tiled_mlp") + ": value true with " + m.name + "'s " + std::to_string(m.num_experts) +
                           " experts is not priced (allowed: false; TiledMLP over a mixture-of-experts block is not "
                           "priced yet)");
  }
  SPPLAN_RETURN_IF_ERROR(check_cluster_shape(plan.cluster, where));
  if (k.micro_batch < 1 || k.grad_accum_steps < 1) {
    return Status::invalid(where("micro_batch") + ": value " + std::to_string(k.micro_batch) +
                           " is not allowed (allowed: a whole number >= 1)");
  }
  return Status::ok();
}

Status check_cluster_shape(const ClusterSpec& cluster, const WhereFn& where) {
  const int64_t per_node = cluster.gpus_per_node();
  if (cluster.num_gpus > per_node && cluster.num_gpus % per_node != 0) {
    return Status::invalid(where("num_gpus") + ": value " + std::to_string(cluster.num_gpus) +
                           " is not a whole number of nodes of " + std::to_string(per_node) +
                           " GPUs (allowed: 1 to " + std::to_string(per_node) + ", or a multiple of " +
                           std::to_string(per_node) + "; the node size is gpus_per_node)");
  }
  return Status::ok();
}

Status check_attention_precision(const PlanSpec& plan, const WhereFn& where) {
  // FlashAttention 2 runs fp16 and bf16, FlashAttention 3 those and fp8: neither has fp32 kernels.
  // SDPA and flex_attention (Triton, any float dtype) do.
  const AttentionKernel a = plan.stack.attention;
  if (plan.knobs.precision == Precision::kFp32 && (a == AttentionKernel::kFlash2 || a == AttentionKernel::kFlash3)) {
    return Status::invalid(where("attention") + ": value \"" + to_string(a) +
                           "\" has no fp32 kernels (FlashAttention runs fp16 and bf16 only; allowed with precision fp32: sdpa, flex)");
  }
  return Status::ok();
}

Status settle_attention(PlanSpec* plan, bool named, const WhereFn& where) {
  plan->attention_named = named;
  settle_layout_attention(plan);
  return check_attention_precision(*plan, where);
}

}  // namespace spplan
