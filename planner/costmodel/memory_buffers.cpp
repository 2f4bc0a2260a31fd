// ZeRO gathered parameters, gradient buckets, optimizer-step transients and the fixed overheads
// the framework does not see (bytes, one rank).
#include <algorithm>

#include "planner/core/units.hpp"
#include "planner/costmodel/dtype.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {

double layer_gathered_bytes(const PlanSpec& p) {
  if (p.knobs.zero_stage < 3) return 0.0;  // weights are resident, nothing is gathered
  return act_bytes(p) * param_counts(p.model).per_layer;
}

double gathered_params_bytes(const PlanSpec& p) {
  if (p.knobs.zero_stage < 3) return 0.0;
  // The layer running now plus the prefetched elements (stage3_prefetch_bucket_size, MEMORY-FACTS 2.2).
  const double bucket = p.stack.zero3_prefetches ? p.knobs.prefetch_bucket_elems : 0.0;
  const double prefetch = std::min(bucket, param_counts(p.model).per_layer);
  return layer_gathered_bytes(p) + act_bytes(p) * prefetch;
}

double reuse_kept_params_bytes(const PlanSpec& p) {
  if (p.knobs.zero_stage < 3) return 0.0;
  const ParamCounts c = param_counts(p.model);
  // At the forward/backward turn the last layers reappear (recompute, backward) within
  // max_reuse_distance, so DeepSpeed keeps them gathered; the head between them counts toward the
  // distance and each kept layer is counted twice in the trace (forward, then recompute).
  const double head = c.lm_head > 0 ? c.lm_head : c.embedding;
  const double window = std::max(0.0, p.stack.zero3_reuse_window_elems - head) / 2.0;
  return act_bytes(p) * std::min(window, c.layers);
}

double gathered_embedding_bytes(const PlanSpec& p) {
  if (p.knobs.zero_stage < 3) return 0.0;
  return act_bytes(p) * param_counts(p.model).embedding;  // embedding or lm_head, one at a time
}

double layer_grad_transient_bytes(const PlanSpec& p) {
  // Below stage 2 autograd accumulates straight into the full gradient buffers.
  if (p.knobs.zero_stage < 2) return 0.0;
  return act_bytes(p) * param_counts(p.model).per_layer;  // before the hook copies it into the bucket
}

double head_grad_transient_bytes(const PlanSpec& p) {
  if (p.knobs.zero_stage < 2) return 0.0;
  return act_bytes(p) * param_counts(p.model).embedding;  // largest single grad (MEMORY-FACTS 2.3)
}

namespace {

// Elements of one reduce bucket: the configured size, at most the gradients there are.
double bucket_elems(const PlanSpec& p) { return std::min(p.knobs.reduce_bucket_elems, trained_params(p)); }

// Below stage 2: one bucket converted to the communication dtype, when it differs from the gradients'.
double converted_bucket_bytes(const PlanSpec& p) {
  const double comm = grad_comm_bytes(p);
  return comm != act_bytes(p) ? bucket_elems(p) * comm : 0.0;
}

}  // namespace

double reduce_buffer_bytes(const PlanSpec& p) {
  if (p.cluster.num_gpus == 1) return 0.0;  // no gradient reduction on one GPU
  // Stage 2/3: the IPG bucket in the communication dtype and the flattened copy reduce-scatter
  // makes of it (MEMORY-FACTS 2.3). Stage 0/1: only a converted copy when the comm dtype differs.
  if (p.knobs.zero_stage >= 2) return 2.0 * bucket_elems(p) * grad_comm_bytes(p);
  if (p.stack.reduces_after_backward) return 0.0;  // its copy: reduce_after_backward_bytes
  return converted_bucket_bytes(p);
}

double reduce_after_backward_bytes(const PlanSpec& p) {
  if (p.cluster.num_gpus == 1 || p.knobs.zero_stage >= 2 || !p.stack.reduces_after_backward) return 0.0;
  return converted_bucket_bytes(p);  // alive while that bucket is reduced, after the backward
}

double reduce_copy_bytes(const PlanSpec& p) { return reduce_buffer_bytes(p) / 2; }

double optimizer_step_transient_bytes(const PlanSpec& p) {
  if (p.knobs.offload_optimizer != OffloadDevice::kNone) return 0.0;  // the step runs on the host
  const double partition = trained_params(p) / (p.knobs.zero_stage == 0 ? 1.0 : p.cluster.num_gpus);
  // Flattened gradients of one sub-group plus their fp32 copy (MEMORY-FACTS 2.4); plain fp32
  // training steps in place.
  if (p.knobs.precision == Precision::kFp32) return 0.0;
  if (p.stack.step_upcasts_whole_partition) return partition * kFp32Bytes;
  return std::min(partition, facts::kSubGroupElems) * (act_bytes(p) + kFp32Bytes);
}

double gemm_workspace_bytes(const PlanSpec& p) { return p.cluster.gpu.gemm_workspace_mib * kMiB; }

// NCCL buffers of the SP all-to-all: every peer of the group is connected, those in other nodes
// with fewer channels. SP groups are consecutive ranks, so a group spans whole nodes or fits in one.
double sp_all_to_all_buffer_bytes(const PlanSpec& p) {
  const double sp = static_cast<double>(p.knobs.sp);
  const double node_peers = std::min(sp, static_cast<double>(p.cluster.gpus_per_node())) - 1.0;
  const double net_peers = sp - 1.0 - node_peers;
  const double net_share = facts::kNcclNetChannelsPerPeer / facts::kNcclP2pChannelsPerPeer;
  return (node_peers + net_peers * net_share) * p.cluster.gpu.nccl_a2a_gib_per_peer * kGiB;
}

double fixed_overhead_bytes(const PlanSpec& p) {
  const GpuSpec& g = p.cluster.gpu;
  double bytes = g.cuda_context_gib * kGiB + gemm_workspace_bytes(p);
  if (p.cluster.num_gpus > 1) bytes += g.nccl_gib_per_group * kGiB;  // world / ZeRO ring communicator
  return bytes + sp_all_to_all_buffer_bytes(p) + ring_communicator_bytes(p);
}

}  // namespace spplan::costmodel
