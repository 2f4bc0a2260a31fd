// Parameter counts, persistent model state per GPU and host memory per node.
#include <algorithm>
#include <cmath>

#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/dtype.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {

ParamCounts param_counts(const ModelSpec& m) {
  const double h = m.hidden_size, q = m.q_dim(), kv = m.kv_dim(), i = m.intermediate_size;
  ParamCounts c;
  c.attention = h * q        // W_q
                + 2 * h * kv // W_k, W_v
                + q * h      // W_o
                + (m.qk_norm ? 2.0 * m.head_dim : 0.0)    // Qwen3 q_norm, k_norm
                + (m.attention_bias ? q + 2 * kv : 0.0)   // Qwen2 q/k/v biases (Qwen2Attention, bias=True)
                + (m.attention_sinks ? static_cast<double>(m.num_attention_heads) : 0.0);  // gpt-oss: a sink per head
  const double dense_mlp = 3 * h * i;  // W_gate, W_up, W_down
  c.mlp = c.mlp_active = dense_mlp;
  if (m.is_moe()) {
    // Every expert's gate, up and down, and the router's h x E weight (no bias: transformers'
    // Qwen3MoeTopKRouter, MixtralTopKRouter); a token runs through its k experts and the router.
    // gpt-oss (expert_biases): the router's bias [E] and each expert's gate|up [2 i] and down [h]
    // biases (GptOssTopKRouter, GptOssExperts). GLM-4.5: a shared expert every token runs through
    // (Glm4MoeMoE.shared_experts); its router's correction bias is a buffer, not a parameter.
    const double experts = static_cast<double>(m.num_experts), ie = static_cast<double>(m.moe_intermediate_size);
    const double expert = 3 * h * ie + (m.expert_biases ? 2 * ie + h : 0.0);
    const double router = h * experts + (m.expert_biases ? experts : 0.0);
    const double shared = 3 * h * static_cast<double>(m.shared_expert_intermediate_size);
    c.mlp = experts * expert + router + shared;
    c.mlp_active = static_cast<double>(m.experts_per_token) * expert + router + shared;
  }
  const double norms = 2 * h;  // input and post-attention RMSNorm
  c.per_layer = c.attention + c.mlp + norms;
  c.dense_layer = c.attention + dense_mlp + norms;
  const double mixture = static_cast<double>(m.mixture_layers()), dense = static_cast<double>(m.dense_layers());
  c.layers = mixture * c.per_layer + dense * c.dense_layer;
  c.mean_layer = c.layers / static_cast<double>(m.num_hidden_layers);
  c.layers_active = mixture * (c.attention + c.mlp_active) + dense * (c.attention + dense_mlp);
  c.embedding = static_cast<double>(m.vocab_size) * h;
  c.lm_head = m.tie_word_embeddings ? 0.0 : c.embedding;
  // A multimodal model's encoders hold weights in the same ZeRO partitions as the rest, and
  // gradients and optimizer state unless they hold their weights only (encoders_weights_only); a
  // text step never runs them, so neither FLOPs nor ZeRO-3's per-layer gathers count them.
  c.encoders = m.encoder_params;
  c.total = c.layers + c.embedding + c.lm_head + h + c.encoders;  // + final norm
  c.largest_tensor = c.embedding;
  return c;
}

bool encoders_weights_only(const PlanSpec& p) {
  return p.model.has_encoders() && (p.stack.freezes_encoders || !layout_record(p).state_for_unrun_params);
}

double trained_params(const PlanSpec& p) {
  const ParamCounts c = param_counts(p.model);
  return c.total - (encoders_weights_only(p) ? c.encoders : 0.0);
}

// Parameters below the persistence threshold stay gathered under ZeRO-3 (MEMORY-FACTS 2.1): in
// these models the RMSNorm weights (h each, two per layer and the final one), Qwen3's q/k norms and
// Qwen2's q/k/v biases.
double zero3_persistent_elems(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  const double threshold = p.stack.zero3_persistence_threshold_elems, layers = m.num_hidden_layers;
  double elems = 0;
  if (m.hidden_size < threshold) elems += (2 * layers + 1) * m.hidden_size;
  if (m.qk_norm && m.head_dim < threshold) elems += 2 * layers * m.head_dim;
  if (m.attention_bias) {  // Qwen2's q, k and v biases: three tensors per layer, each its own
    if (m.q_dim() < threshold) elems += layers * m.q_dim();
    if (m.kv_dim() < threshold) elems += 2 * layers * m.kv_dim();
  }
  return elems;
}

// ZeRO partitions over the whole world, dp x sp (DeepSpeed seq_data_parallel_group, MEMORY-FACTS 1.3).
static double zero_partitions(const PlanSpec& p) { return static_cast<double>(p.cluster.num_gpus); }

ModelStateBytes model_state_bytes(const PlanSpec& p) {
  const ParamCounts c = param_counts(p.model);
  const double psi = c.total, trained = trained_params(p), n = zero_partitions(p), w = act_bytes(p);
  const int64_t stage = p.knobs.zero_stage;
  const bool opt_offloaded = p.knobs.offload_optimizer != OffloadDevice::kNone;
  ModelStateBytes s;
  // Weights: replicated below stage 3, partitioned at 3, on the host with offload_params.
  if (stage < 3) {
    s.params = w * psi;
  } else if (p.knobs.offload_params == OffloadDevice::kNone) {
    s.params = w * psi / n;
  }
  if (stage == 3) s.params += w * zero3_persistent_elems(p);
  // Gradients in the model dtype (grad_accum_dtype default, MEMORY-FACTS 1.3): full below stage 2,
  // partitioned from 2, kept on the host when the optimizer is offloaded at stage 2/3 (3.1).
  if (stage < 2) {
    s.grads = w * trained;
  } else if (!opt_offloaded) {
    s.grads = w * trained / n;
  }
  // fp32 master + Adam moments: replicated at stage 0, partitioned from 1, host when offloaded.
  if (!opt_offloaded) s.optimizer = (master_bytes(p) + kAdamStateBytes) * trained / (stage == 0 ? 1.0 : n);
  return s;
}

HostMemory host_memory(const PlanSpec& p) {
  const double n = zero_partitions(p);
  const double ranks_on_node = std::min<double>(p.cluster.num_gpus, p.cluster.gpus_per_node());
  const double weights = param_counts(p.model).total / n;  // weight elements one rank owns
  const double trained = trained_params(p) / n;             // optimizer elements one rank owns
  HostMemory host;
  if (p.knobs.offload_optimizer == OffloadDevice::kCpu) {
    host.optimizer_bytes = (facts::kHostOptimizerBytesPerParamBesidesGrads + act_bytes(p)) * trained * ranks_on_node;
  } else if (p.knobs.offload_optimizer == OffloadDevice::kNvme) {
    // States live on NVMe; the gradient partition and the swap buffers stay in host RAM:
    // 4 buffers of one sub-group, fp32 (MEMORY-FACTS 3.3).
    const double swap = 4 * kFp32Bytes * std::min(trained, facts::kSubGroupElems);
    host.optimizer_bytes = (act_bytes(p) * trained + swap) * ranks_on_node;
    // On the drives: each partition element's fp32 master and Adam moments, the tensors the
    // optimizer swapper moves (MEMORY-FACTS 3.3: param, m, v).
    host.nvme_bytes += (kFp32Bytes + kAdamStateBytes) * trained * ranks_on_node;
  }
  if (p.knobs.offload_params == OffloadDevice::kCpu) {
    host.params_bytes = act_bytes(p) * weights * ranks_on_node;
  } else if (p.knobs.offload_params == OffloadDevice::kNvme) {
    // Partitions live on NVMe; host RAM holds each rank's pinned swap buffer.
    host.params_bytes = act_bytes(p) * std::min(weights, facts::kNvmeParamSwapBufferElems) * ranks_on_node;
    host.nvme_bytes += act_bytes(p) * weights * ranks_on_node;  // every partition, in the param dtype
  }
  if (p.knobs.act_ckpt == ActCkpt::kOffload) {
    host.activations_bytes = checkpoint_bytes_per_layer(p) * p.model.num_hidden_layers * ranks_on_node;
  }
  return host;
}

}  // namespace spplan::costmodel
