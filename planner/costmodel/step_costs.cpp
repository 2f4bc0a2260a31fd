// Every operation of one training step, priced. Shapes are per rank: s = local tokens, S = the
// whole sequence (attention runs over S for nh/P heads after the all-to-all).
#include "planner/costmodel/step_costs.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "planner/costmodel/comm.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/dtype.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "planner/costmodel/layer_kernels.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/packed_attention.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

struct Shape {
  double s, S, b, h, q, kv, kv_a2a, i, v, a;  // tokens, widths, batch, bytes per element
  int64_t sp;
  int64_t cp = 1;
  double experts = 0, k = 0;  // a mixture's experts and experts per token (0: dense); i is one expert's width
  double shared_i = 0;        // a mixture's shared expert's width (GLM-4.5), run on every token
};

Shape shape_of(const PlanSpec& p) {
  const ModelSpec& m = p.model;
  Shape x;
  x.s = local_tokens(p);
  x.b = p.knobs.micro_batch;
  x.S = x.s / x.b * p.knobs.sp * p.knobs.cp;  // the whole sequence
  x.h = m.hidden_size;
  x.q = m.q_dim();
  x.kv = m.kv_dim();
  x.kv_a2a = kv_width_after_a2a(p);
  x.i = m.is_moe() ? m.moe_intermediate_size : m.intermediate_size;
  if (m.is_moe()) {
    x.experts = static_cast<double>(m.num_experts);
    x.k = static_cast<double>(m.experts_per_token);
    x.shared_i = static_cast<double>(m.shared_expert_intermediate_size);
  }
  x.v = m.vocab_size;
  x.a = act_bytes(p);
  x.sp = p.knobs.sp;
  x.cp = p.knobs.cp;
  return x;
}

// The memory-bound kernels of one pass (layer_kernels.hpp) over the rank's s tokens, on elements
// of `elem_bytes`.
double traffic_time_s(const GpuSpec& g, const KernelTraffic& t, const Shape& x, double elem_bytes) {
  return elementwise_time_s(g, t.bytes_per_token * x.s, elem_bytes, t.kernels);
}

// Chunks of the fused linear cross-entropy (Liger's chunk size, memory_activations.cpp).
double fused_loss_chunks(const Shape& x) { return std::ceil(x.s / liger_chunk_tokens(x.s, x.h, x.v)); }

// Kernel calls of one layer's attention: the ring's (ring.hpp ring_attention_calls), or without a
// ring one a block of a window run in masked blocks (compute.hpp window_attention_calls; such a
// stack windows every layer or none: the engine's record refuses the others).
int64_t attention_calls(const PlanSpec& p, const Shape& x) {
  const ModelSpec& m = p.model;
  if (p.knobs.cp > 1 || m.windowed_layers() == 0) return ring_attention_calls(p);
  return window_attention_calls(p.stack, x.S, static_cast<double>(m.sliding_window));
}

// Forward FLOPs of one attention call: the rank's nh/sp heads over the pairs its queries attend
// to on the slowest rank (packed_attention.hpp slowest_rank_attention_work: the ring's shard, the
// whole sequence when cp == 1, or the documents'), `extra_keys` more for each of its rows under a
// causal mask and `bias_extra` more for each pair under a bias, averaged over the windowed and full
// layers, in the layer's calls.
double attention_block_flops(const PlanSpec& p, const Shape& x, double extra_keys, double bias_extra) {
  const ModelSpec& m = p.model;
  const double heads = static_cast<double>(m.num_attention_heads) / x.sp;
  const double pairs = mean_over_attention_layers(m, [&](double window) {
    return attention_cost_pairs(slowest_rank_attention_work(p, x.S, window), extra_keys, bias_extra);
  });
  return attention_pairs_fwd_flops(pairs, heads, static_cast<double>(m.head_dim), x.b) /
         static_cast<double>(attention_calls(p, x));
}

// Calls beyond the layer's blocks that a stack calling its kernel once a document makes over the
// micro batch (packed_attention.hpp per_document_calls), each only its fixed cost more: the FLOPs
// are the blocks' already.
double extra_attention_calls(const PlanSpec& p, const Shape& x, int64_t blocks) {
  const double calls =
      x.b * mean_over_attention_layers(p.model, [&](double window) { return per_document_calls(p, x.S, window); });
  return std::max(0.0, calls - static_cast<double>(blocks));
}

// A mixture runs its experts one after another (transformers' expert loop), each on its share of
// the k x s routed tokens: the router balanced, s k / E each (imbalance moves tokens between GEMMs
// of one GPU, so it changes only their efficiency); the router's h x E GEMM over all tokens first.
// transformers 5's grouped_mm reads the same weights and does the same FLOPs in one launch per
// projection instead of E: priced as the loop, its E - 1 launches a projection too many are
// microseconds against a long sequence's GEMMs.
double experts_tokens(const Shape& x) { return x.s * x.k / x.experts; }

// A SwiGLU of width `i` over `tokens` tokens: gate, up; down.
double swiglu_fwd_s(const GpuSpec& g, const Shape& x, double tokens, double i) {
  return 2 * gemm_time_s(g, tokens, i, x.h, x.a) + gemm_time_s(g, tokens, x.h, i, x.a);
}
double swiglu_bwd_s(const GpuSpec& g, const Shape& x, double tokens, double i) {
  return 2 * gemm_bwd_time_s(g, tokens, i, x.h, x.a) + gemm_bwd_time_s(g, tokens, x.h, i, x.a);
}

// A mixture: its experts, the router over all tokens, and a shared expert over all tokens (GLM-4.5).
double mlp_fwd_s(const GpuSpec& g, const Shape& x) {
  if (x.experts > 0) {
    const double shared = x.shared_i > 0 ? swiglu_fwd_s(g, x, x.s, x.shared_i) : 0.0;
    return x.experts * swiglu_fwd_s(g, x, experts_tokens(x), x.i) + gemm_time_s(g, x.s, x.experts, x.h, x.a) + shared;
  }
  return swiglu_fwd_s(g, x, x.s, x.i);
}

double mlp_bwd_s(const GpuSpec& g, const Shape& x) {
  if (x.experts > 0) {
    const double shared = x.shared_i > 0 ? swiglu_bwd_s(g, x, x.s, x.shared_i) : 0.0;
    return x.experts * swiglu_bwd_s(g, x, experts_tokens(x), x.i) + gemm_bwd_time_s(g, x.s, x.experts, x.h, x.a) +
           shared;
  }
  return swiglu_bwd_s(g, x, x.s, x.i);
}

// One TiledMLP shard's shape (all rows of each sequence shard at once; tiled_mlp_shards).
Shape mlp_tile(const Shape& x, int64_t tiles) {
  Shape t = x;
  t.s = x.s / static_cast<double>(tiles);
  return t;
}

// A pass's ring communication (ring.hpp): the hops beside the attention blocks, and what is not
// hidden before and after them.
void set_ring_merge(const GpuSpec& g, const RingMergeTraffic& m, const Shape& x, LayerPassCosts* c) {
  c->cp_merge_s = m.bytes > 0 ? elementwise_time_s(g, m.bytes, x.a, m.kernels) : 0.0;
}

void set_ring_comm(const RingPassComm& ring, LayerPassCosts* c) {
  c->cp_pre_s = ring.pre_s;
  c->cp_hop_s = ring.hop_s;
  c->cp_hops = ring.hops;
  c->cp_post_s = ring.post_s;
}

LayerPassCosts forward_pass(const PlanSpec& p, const Shape& x) {
  const GpuSpec& g = p.cluster.gpu;
  LayerPassCosts c;
  c.norm_s = traffic_time_s(g, layer_elementwise_fwd(p), x, x.a);
  c.qkv_s = gemm_time_s(g, x.s, x.q + 2 * x.kv, x.h, x.a);
  c.a2a_qkv_s = collective_time_s(p.cluster, Collective::kAllToAll, x.a * x.s * (x.q + 2 * x.kv_a2a), x.sp);
  c.attention_blocks = attention_calls(p, x);
  const double block_flops = attention_block_flops(p, x, g.attention_causal_extra_keys, g.attention_bias_extra_pairs);
  c.attention_s = c.attention_blocks * attention_fwd_time_s(g, p.stack.attention, block_flops, x.a) +
                  extra_attention_calls(p, x, c.attention_blocks) * attention_fwd_time_s(g, p.stack.attention, 0, x.a);
  set_ring_comm(ring_forward_comm(p), &c);
  set_ring_merge(g, ring_forward_merge(p), x, &c);
  c.a2a_out_s = collective_time_s(p.cluster, Collective::kAllToAll, x.a * x.s * x.q, x.sp);
  c.out_proj_s = gemm_time_s(g, x.s, x.h, x.q, x.a);
  c.mlp_s = mlp_fwd_s(g, x);
  if (p.knobs.tiled_mlp) {
    c.mlp_tiles = tiled_mlp_shards(p);
    c.mlp_s = c.mlp_tiles * mlp_fwd_s(g, mlp_tile(x, c.mlp_tiles));
  }
  return c;
}

// Backward: each GEMM's input and weight gradients (gemm_bwd_time_s), attention at 2.5x its
// forward FLOPs, the elementwise ops' autograd backward, the all-to-alls mirrored; TiledMLP
// recomputes each shard's forward first.
LayerPassCosts backward_pass(const PlanSpec& p, const Shape& x, const LayerPassCosts& fwd) {
  const GpuSpec& g = p.cluster.gpu;
  LayerPassCosts c = fwd;
  c.norm_s = traffic_time_s(g, layer_elementwise_bwd(p), x, x.a);
  c.qkv_s = gemm_bwd_time_s(g, x.s, x.q + 2 * x.kv, x.h, x.a);
  c.out_proj_s = gemm_bwd_time_s(g, x.s, x.h, x.q, x.a);
  const double block_flops =
      attention_block_flops(p, x, g.attention_bwd_causal_extra_keys, g.attention_bwd_bias_extra_pairs);
  c.attention_s = c.attention_blocks * attention_bwd_time_s(g, p.stack.attention, block_flops, x.a) +
                  extra_attention_calls(p, x, c.attention_blocks) * attention_bwd_time_s(g, p.stack.attention, 0, x.a);
  set_ring_comm(ring_backward_comm(p), &c);
  set_ring_merge(g, ring_backward_merge(p), x, &c);
  c.mlp_s = p.knobs.tiled_mlp ? fwd.mlp_s + fwd.mlp_tiles * mlp_bwd_s(g, mlp_tile(x, fwd.mlp_tiles)) : mlp_bwd_s(g, x);
  return c;
}

// Liger's fused linear cross-entropy (tiled_loss; the engine's is the same algorithm) runs all of
// its work in the forward, chunk by chunk: the chunk's logits (a GEMM), their softmax gradient in
// place (one read, one write), d(hidden) and the accumulation into d(lm_head) (the logits GEMM's
// two backward GEMMs, in their layouts). Each chunk's GEMMs read the whole [V, h] head, so a chunk
// of T / (V/h) tokens is memory-bound: the roofline prices that per chunk. Its backward only
// scales the saved gradients by the incoming one.
double fused_loss_fwd_s(const PlanSpec& p, const Shape& x) {
  const GpuSpec& g = p.cluster.gpu;
  const double chunk = liger_chunk_tokens(x.s, x.h, x.v);
  const double per_chunk = gemm_time_s(g, chunk, x.v, x.h, x.a) + elementwise_time_s(g, 2 * x.a * chunk * x.v, x.a) +
                           gemm_bwd_time_s(g, chunk, x.v, x.h, x.a);
  return fused_loss_chunks(x) * per_chunk;
}

// A loss that recomputes its chunks (TRL's chunked_nll: memory_activations.cpp says what it holds)
// runs each chunk's head GEMM in the forward and again in the backward's recompute, then the GEMM's
// two backward GEMMs; the cross-entropy's passes over the chunk's fp32 [c, V] logits are the
// unfused loss's (layer_kernels.hpp), run once in the forward and again in the recompute before
// their backward, whatever the chunk, since their bytes scale with the tokens.
double chunk_count(const PlanSpec& p, const Shape& x) {
  return std::ceil(x.s / static_cast<double>(p.stack.tiled_loss_chunk_tokens));
}

double recomputed_chunks_fwd_s(const PlanSpec& p, const Shape& x) {
  const GpuSpec& g = p.cluster.gpu;
  const double chunk = static_cast<double>(p.stack.tiled_loss_chunk_tokens);
  return chunk_count(p, x) * gemm_time_s(g, chunk, x.v, x.h, x.a) +
         traffic_time_s(g, unfused_loss_fwd(p), x, cross_entropy_bytes(p));
}

double recomputed_chunks_bwd_s(const PlanSpec& p, const Shape& x) {
  const GpuSpec& g = p.cluster.gpu;
  const double chunk = static_cast<double>(p.stack.tiled_loss_chunk_tokens);
  return recomputed_chunks_fwd_s(p, x) + chunk_count(p, x) * gemm_bwd_time_s(g, chunk, x.v, x.h, x.a) +
         traffic_time_s(g, unfused_loss_bwd(p), x, cross_entropy_bytes(p));
}

double fused_loss_bwd_s(const PlanSpec& p, const Shape& x) {
  const double grads_bytes = x.a * (x.s * x.h + x.v * x.h);  // d(hidden) and d(lm_head), scaled in place
  return elementwise_time_s(p.cluster.gpu, 2 * grads_bytes, x.a, 2);
}

// Unfused: the LM head's GEMM, then PyTorch's passes over s x V (layer_kernels.hpp).
double loss_fwd_s(const PlanSpec& p, const Shape& x) {
  if (loss_recomputes_chunks(p)) return recomputed_chunks_fwd_s(p, x);
  if (p.knobs.tiled_loss) return fused_loss_fwd_s(p, x);
  const GpuSpec& g = p.cluster.gpu;
  // Past the upcast, the cross-entropy's passes run on fp32 logits (dtype.hpp cross_entropy_bytes).
  return gemm_time_s(g, x.s, x.v, x.h, x.a) + traffic_time_s(g, unfused_loss_fwd(p), x, cross_entropy_bytes(p));
}

double loss_bwd_s(const PlanSpec& p, const Shape& x) {
  if (loss_recomputes_chunks(p)) return recomputed_chunks_bwd_s(p, x);
  if (p.knobs.tiled_loss) return fused_loss_bwd_s(p, x);
  const GpuSpec& g = p.cluster.gpu;
  return gemm_bwd_time_s(g, x.s, x.v, x.h, x.a) + traffic_time_s(g, unfused_loss_bwd(p), x, cross_entropy_bytes(p));
}

// A mixture with dense first layers (GLM-4.5's first_k_dense_replace): each kind's own passes
// kept for a timeline, and the step's passes at their mean over the L layers, so the step's sums
// count each kind once per layer of it. Only the MLP and the elementwise passes differ; attention
// and communication do not depend on the MLP.
void mix_in_dense_layers(const PlanSpec& p, StepCosts* c) {
  const PlanSpec dense = dense_layer_plan(p);
  const Shape x = shape_of(dense);
  c->dense_layer.forward = forward_pass(dense, x);
  c->dense_layer.backward = backward_pass(dense, x, c->dense_layer.forward);
  c->mixture_layer.forward = c->forward;
  c->mixture_layer.backward = c->backward;
  if (p.knobs.act_ckpt != ActCkpt::kNone) {
    c->dense_layer.recompute = c->dense_layer.forward;
    c->mixture_layer.recompute = c->mixture_layer.forward;
  }
  const double share = static_cast<double>(p.model.first_dense_layers) / static_cast<double>(p.model.num_hidden_layers);
  for (auto [mixed, own] : {std::pair{&c->forward, &c->dense_layer.forward}, std::pair{&c->backward, &c->dense_layer.backward}}) {
    mixed->norm_s += share * (own->norm_s - mixed->norm_s);
    mixed->mlp_s += share * (own->mlp_s - mixed->mlp_s);
  }
}

}  // namespace

StepCosts step_costs(const PlanSpec& p) {
  if (needs_host_pricing(p)) return step_costs(as_priced(p));  // a host CPU: each rank's share of it (host_cpu.hpp)
  const Shape x = shape_of(p);
  const GpuSpec& g = p.cluster.gpu;
  const ParamCounts params = param_counts(p.model);
  const int64_t world = p.cluster.num_gpus;
  const double n = static_cast<double>(world);
  StepCosts c;
  c.layers = p.model.num_hidden_layers;
  if (p.model.is_moe()) c.first_mixture_layer = p.model.first_dense_layers;
  c.micro_steps = p.knobs.grad_accum_steps;
  c.reducing_micro_steps = p.knobs.zero_stage >= 2 ? c.micro_steps : 1;
  c.forward = forward_pass(p, x);
  c.backward = backward_pass(p, x, c.forward);
  if (p.model.is_moe() && p.model.first_dense_layers > 0) mix_in_dense_layers(p, &c);
  if (p.knobs.act_ckpt != ActCkpt::kNone) c.recompute = c.forward;
  c.embed_fwd_s = elementwise_time_s(g, 2 * x.a * x.h * x.s, x.a);  // gather rows, write hidden
  c.embed_bwd_s = elementwise_time_s(g, 3 * x.a * x.h * x.s, x.a);  // scatter-add into the table grad
  c.loss_fwd_s = loss_fwd_s(p, x);
  c.loss_bwd_s = loss_bwd_s(p, x);
  if (p.knobs.tiled_loss) {
    c.loss_tiles = static_cast<int64_t>(loss_recomputes_chunks(p) ? chunk_count(p, x) : fused_loss_chunks(x));
  }

  const bool zero3 = p.knobs.zero_stage == 3;
  if (zero3) {
    c.param_gather_s = collective_time_s(p.cluster, Collective::kAllGather, x.a * params.mean_layer, world);
    c.embed_gather_s = collective_time_s(p.cluster, Collective::kAllGather, x.a * params.embedding, world);
    const double layer_partition_bytes = x.a * params.mean_layer / n;
    if (p.knobs.offload_params != OffloadDevice::kNone) {
      c.param_fetch_h2d_s = pcie_copy_time_s(g, layer_partition_bytes, false);
    }
    if (p.knobs.offload_params == OffloadDevice::kNvme && g.nvme_GBps_per_node > 0) {
      // Every rank of the node reads its partition of the layer from the node's NVMe drives first.
      const double ranks_on_node = std::min<double>(world, g.gpus_per_node);
      c.param_fetch_h2d_s += layer_partition_bytes * ranks_on_node / (g.nvme_GBps_per_node * kGB);
    }
  }
  // Gradients: reduce-scatter per layer at stage 2/3; all-reduce at stage 0/1 (reducing_micro_steps).
  const double comm = grad_comm_bytes(p);
  const Collective grad_kind = p.knobs.zero_stage >= 2 ? Collective::kReduceScatter : Collective::kAllReduce;
  c.grad_reduce_s = collective_time_s(p.cluster, grad_kind, comm * params.mean_layer, world);
  c.embed_grad_reduce_s = collective_time_s(p.cluster, grad_kind, comm * (params.embedding + params.lm_head), world);
  if (p.knobs.act_ckpt == ActCkpt::kOffload) {
    c.ckpt_d2h_s = pcie_copy_time_s(g, checkpoint_bytes_per_layer(p), true);
    c.ckpt_h2d_s = pcie_copy_time_s(g, checkpoint_bytes_per_layer(p), true);
  }

  const double trained = trained_params(p);
  const double partition = trained / (p.knobs.zero_stage == 0 ? 1.0 : n);  // what the optimizer steps
  const double ranks_on_node = std::min<double>(world, g.gpus_per_node);
  switch (p.knobs.offload_optimizer) {
    case OffloadDevice::kNone:
      // Adam reads and writes master, m and v (fp32) and the weights, reads the grads: HBM-bound.
      // Its bytes are mostly the fp32 master and moments: the fp32 rate.
      c.optimizer_s = elementwise_time_s(g, partition * (2 * (master_bytes(p) + kAdamStateBytes + x.a) + x.a), kFp32Bytes);
      break;
    case OffloadDevice::kCpu:
    case OffloadDevice::kNvme:
      c.grad_d2h_s = pcie_copy_time_s(g, x.a * partition, false);
      // Every rank of a node runs DeepSpeed CPU Adam on the node's shared cores.
      c.optimizer_s = partition * ranks_on_node / g.host_adam_params_per_s;
      if (p.knobs.offload_optimizer == OffloadDevice::kNvme && g.nvme_GBps_per_node > 0) {
        // Read and write back master + m + v of every rank on the node.
        c.optimizer_s += 2 * (kFp32Bytes + kAdamStateBytes) * partition * ranks_on_node / (g.nvme_GBps_per_node * kGB);
      }
      c.param_h2d_s = pcie_copy_time_s(g, x.a * partition, false);
      break;
  }
  if (p.knobs.zero_stage == 1 || p.knobs.zero_stage == 2) {
    // The stepped partitions' new weights (encoders that hold their weights only do not change).
    c.param_allgather_s = collective_time_s(p.cluster, Collective::kAllGather, x.a * trained, world);
  }
  return c;
}

const LayerPassCosts& StepCosts::layer_pass(Pass pass, int64_t layer) const {
  const LayerPasses* own = first_mixture_layer <= 0 ? nullptr : layer < first_mixture_layer ? &dense_layer : &mixture_layer;
  switch (pass) {
    case Pass::kForward: return own != nullptr ? own->forward : forward;
    case Pass::kRecompute: return own != nullptr ? own->recompute : recompute;
    case Pass::kBackward: break;
  }
  return own != nullptr ? own->backward : backward;
}

double StepCosts::micro_step_compute_s() const {
  return layers * (forward.compute_s() + recompute.compute_s() + backward.compute_s()) + embed_fwd_s + embed_bwd_s +
         loss_fwd_s + loss_bwd_s;
}

double StepCosts::micro_step_a2a_s() const { return layers * (forward.a2a_s() + recompute.a2a_s() + backward.a2a_s()); }

double StepCosts::micro_step_cp_comm_s() const {
  return layers * (forward.cp_comm_s() + recompute.cp_comm_s() + backward.cp_comm_s());
}

double StepCosts::micro_step_cp_exposed_s() const {
  return layers * (forward.cp_exposed_s() + recompute.cp_exposed_s() + backward.cp_exposed_s());
}

double StepCosts::micro_step_gather_s() const {
  const double uses = recompute.compute_s() > 0 ? 3.0 : 2.0;  // forward, (recompute,) backward
  return layers * uses * param_gather_s + 3.0 * embed_gather_s;
}

double StepCosts::micro_step_reduce_s() const { return layers * grad_reduce_s + embed_grad_reduce_s; }

double StepCosts::step_zero_comm_s() const {
  return micro_steps * micro_step_gather_s() + reducing_micro_steps * micro_step_reduce_s();
}

double StepCosts::micro_step_offload_s() const {
  const double uses = recompute.compute_s() > 0 ? 3.0 : 2.0;
  return layers * (ckpt_d2h_s + ckpt_h2d_s + uses * param_fetch_h2d_s);
}

double StepCosts::optimizer_phase_s() const { return grad_d2h_s + optimizer_s + param_h2d_s + param_allgather_s; }

double StepCosts::serial_s() const {
  return micro_steps * (micro_step_compute_s() + micro_step_a2a_s() + micro_step_cp_comm_s() + micro_step_offload_s()) +
         step_zero_comm_s() +
         optimizer_phase_s();
}

}  // namespace spplan::costmodel
