// Ring attention's communication and memory (ring.hpp). Per layer and rank, with s the rank's
// local tokens (seq x micro_batch / (sp x cp)), kv the K (or V) width after the Ulysses
// all-to-all (kv_width_after_a2a) and a the activation bytes:
//   one K/V chunk      = 2 a s kv
//   forward, ring      : cp-1 hops of one K/V chunk, hop i behind attention block i
//   backward, ring     : cp-1 hops of K/V + dK/dV (fp32), then the last dK/dV hop home, exposed
//   forward, allgather : one all-gather of cp K/V chunks before attention, exposed
//   backward, allgather: the same all-gather again, then a reduce-scatter of dK/dV, exposed
//   allgather per kv-head group (ring-flash-attn's llama3 variant, G groups): each group's gather
//   behind the previous group's attention call, the first exposed; in the backward each group's
//   dK/dV reduce-scatter waits on the compute stream (dist.reduce_scatter_tensor, not async)
#include "planner/costmodel/ring.hpp"

#include <algorithm>

#include "planner/core/units.hpp"
#include "planner/costmodel/comm.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/dtype.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/software_facts.hpp"

namespace spplan::costmodel {
namespace {

// dK/dV accumulate in fp32 across the ring steps and travel in fp32 (ring-flash-attention,
// zhuzilin/ring-flash-attention ring_flash_attn.py: dk, dv = block grads .to(float32), sent with
// send_recv_kv, cast back to q's dtype at the end). Same element count as one K/V chunk.
double ring_dkv_chunk_bytes(const PlanSpec& p) { return ring_kv_chunk_bytes(p) / act_bytes(p) * kFp32Bytes; }

// Output and log-sum-exp merge buffers of the forward: the running output and log-sum-exp in fp32
// (ring-flash-attention utils.py update_out_and_lse keeps out and lse as float32 across steps),
// and one block's output (activation dtype) and log-sum-exp (fp32) from the kernel.
double merge_buffer_bytes(const PlanSpec& p) {
  const double s = local_tokens(p), q = p.model.q_dim(), heads = p.model.num_attention_heads;
  return (kFp32Bytes + act_bytes(p)) * q * s + 2 * kFp32Bytes * heads * s;
}

// Elements of the rank's queries (and attention outputs) after the Ulysses all-to-all, and of its
// K plus V chunk: what the merges read and write.
double q_elems(const PlanSpec& p) { return p.model.q_dim() * local_tokens(p); }
double kv_elems(const PlanSpec& p) { return ring_kv_chunk_bytes(p) / act_bytes(p); }

// The all-gather variant run per group of key-value heads (TrainingStack::allgather_kv_heads_per_call).
bool gathers_per_head_group(const PlanSpec& p) {
  return p.knobs.cp > 1 && p.knobs.cp_comm == CpComm::kAllGather && p.stack.allgather_kv_heads_per_call > 0;
}

// Bytes of one head group's gathered K and V: the whole sequence's keys for its heads.
double gathered_group_bytes(const PlanSpec& p) {
  return static_cast<double>(p.knobs.cp) * ring_kv_chunk_bytes(p) / static_cast<double>(ring_kv_head_groups(p));
}

// ring-flash-attn 0.1.8 llama3_flash_attn_varlen_forward: per group, when there is more than one,
// the rank's K and V heads of the group copied contiguous for the gather (read and write each
// element once); the groups' outputs concatenated at the end (torch.cat: read and write every
// output element; the log-sum-exp's cat is heads x tokens in fp32, 1/d of it, left out).
RingMergeTraffic head_group_forward_merge(const PlanSpec& p) {
  const double groups = static_cast<double>(ring_kv_head_groups(p)), a = act_bytes(p);
  const double kv_copies = groups > 1 ? 2 * ring_kv_chunk_bytes(p) : 0.0;
  return {kv_copies + 2 * a * q_elems(p), (groups > 1 ? 2 * groups : 0.0) + 1};
}

// llama3_flash_attn_varlen_backward: per group the gathered dK/dV buffer zeroed (written once), and
// with more than one group the K, V slices copied into a contiguous buffer and dK, dV copied back
// out of it (read and write each, twice).
RingMergeTraffic head_group_backward_merge(const PlanSpec& p) {
  const double groups = static_cast<double>(ring_kv_head_groups(p));
  const double copies = groups > 1 ? 4 * ring_kv_chunk_bytes(p) : 0.0;
  return {groups * gathered_group_bytes(p) + copies, groups * (groups > 1 ? 5 : 1)};
}

}  // namespace

int64_t ring_kv_head_groups(const PlanSpec& p) {
  if (!gathers_per_head_group(p)) return 1;
  return std::max<int64_t>(1, p.model.kv_heads_per_rank(p.knobs.sp) / p.stack.allgather_kv_heads_per_call);
}

int64_t ring_attention_calls(const PlanSpec& p) {
  if (p.knobs.cp == 1) return 1;
  return gathers_per_head_group(p) ? ring_kv_head_groups(p) : p.knobs.cp;
}

double ring_rank_attention_pairs(const PlanSpec& p, double seq, double window) {
  const int64_t cp = p.knobs.cp;
  if (cp == 1) return computed_window_pairs(p.stack, seq, window);
  // Queries [a, b) of the sequence, each over its causal keys or its window.
  const auto queries = [&](double a, double b) { return causal_pairs(b, window) - causal_pairs(a, window); };
  const double n = static_cast<double>(cp), shard = seq / n, half = shard / 2.0;
  // A rank's pairs are f(its first chunk) (+ f(its mirror chunk)), f(a) = queries(a, a + chunk)
  // nondecreasing and concave in a (each query sees min(position, window) keys): the last rank,
  // whose two zigzag chunks meet in the middle, is the slowest. Past 64 ranks only it is priced,
  // so a search over 2^24 GPUs stays within seconds (the loop read every rank of every ring).
  constexpr int64_t kRanksPricedOneByOne = 64;
  double slowest = 0;
  for (int64_t r = cp > kRanksPricedOneByOne ? cp - 1 : 0; r < cp; ++r) {
    const double i = static_cast<double>(r);
    const double pairs = p.stack.ring_contiguous_shards
                             ? queries(i * shard, (i + 1) * shard)
                             : queries(i * half, (i + 1) * half) + queries((2 * n - 1 - i) * half, (2 * n - i) * half);
    slowest = std::max(slowest, pairs);
  }
  return slowest;
}

AttentionWork ring_rank_attention_work(const PlanSpec& p, double seq, double window) {
  const int64_t cp = p.knobs.cp;
  const double pairs = ring_rank_attention_pairs(p, seq, window);
  if (cp == 1) return {pairs, diagonal_rows(p.stack, seq, window), biased_pairs(p.stack, seq, window)};
  const double shard = seq / static_cast<double>(cp);
  return {pairs, window > 0 && seq > window ? 2 * shard : shard, 0.0};
}

// Forward, read from the engine's merge_attention_block (engine/parallel/ring_attention.cpp); the
// same exp-weighted update runs in ring-flash-attention's update_out_and_lse (utils.py) and torch's
// _SDPAMerger (_context_parallel/_attention.py), both in fp32. Per later block and output element:
// the running output scaled in place (read 4 + write 4 B), the block's output upcast (read a, write
// 4), scaled (read 4, write 4) and added (read 8, write 4): 32 + a bytes, in about 10 kernels with
// the log-sum-exp's small ones. Once a pass: the first block's output upcast (a + 4) and the result
// cast back (4 + a). The slowest rank merges whole rows at every hop (the zigzag's other ranks merge
// half of them at some), and the hops keep the ranks in step, so whole rows are priced.
RingMergeTraffic ring_forward_merge(const PlanSpec& p) {
  if (p.knobs.cp == 1) return {};
  if (gathers_per_head_group(p)) return head_group_forward_merge(p);
  const double a = act_bytes(p), hops = static_cast<double>(p.knobs.cp - 1);
  constexpr double kKernelsPerMerge = 10;
  return {q_elems(p) * (hops * (4 * kFp32Bytes + 4 * kFp32Bytes + a) + 2 * (a + kFp32Bytes)),
          hops * kKernelsPerMerge + 2};
}

// Backward, from the engine's ring_backward: each of the cp blocks adds its dQ (activation dtype)
// into the fp32 dQ accumulator (read 4 + a, write 4 per query element) and its dK, dV into the
// fp32 accumulator that travels with the chunk (the same per K/V element); the accumulators are
// zeroed once (write 4) and cast back once (read 4, write a). ring-flash-attention's zigzag
// backward keeps the same three fp32 accumulators (zigzag_ring_flash_attn.py).
RingMergeTraffic ring_backward_merge(const PlanSpec& p) {
  if (p.knobs.cp == 1) return {};
  if (gathers_per_head_group(p)) return head_group_backward_merge(p);
  const double a = act_bytes(p), blocks = static_cast<double>(p.knobs.cp);
  const double elems = q_elems(p) + kv_elems(p);
  constexpr double kKernelsPerBlock = 3;  // dQ, dK and dV additions
  return {elems * (blocks * (2 * kFp32Bytes + a) + kFp32Bytes + (kFp32Bytes + a)), blocks * kKernelsPerBlock + 6};
}

double ring_kv_chunk_bytes(const PlanSpec& p) { return 2 * act_bytes(p) * local_tokens(p) * kv_width_after_a2a(p); }

RingPassComm ring_forward_comm(const PlanSpec& p) {
  RingPassComm c;
  const int64_t cp = p.knobs.cp, sp = p.knobs.sp;
  if (cp == 1) return c;
  if (gathers_per_head_group(p)) {
    c.pre_s = collective_time_s(p.cluster, Collective::kAllGather, gathered_group_bytes(p), cp, sp);
    c.hops = ring_kv_head_groups(p) - 1;
    c.hop_s = c.pre_s;
    return c;
  }
  if (p.knobs.cp_comm == CpComm::kAllGather) {
    c.pre_s = collective_time_s(p.cluster, Collective::kAllGather, cp * ring_kv_chunk_bytes(p), cp, sp);
    return c;
  }
  c.hops = cp - 1;
  c.hop_s = ring_hop_time_s(p.cluster, ring_kv_chunk_bytes(p), cp, sp);
  return c;
}

RingPassComm ring_backward_comm(const PlanSpec& p) {
  RingPassComm c;
  const int64_t cp = p.knobs.cp, sp = p.knobs.sp;
  if (cp == 1) return c;
  if (gathers_per_head_group(p)) {
    const double group = gathered_group_bytes(p);
    c.pre_s = collective_time_s(p.cluster, Collective::kAllGather, group, cp, sp);
    c.hops = ring_kv_head_groups(p) - 1;
    c.hop_s = c.pre_s;
    c.post_s = static_cast<double>(ring_kv_head_groups(p)) *
               collective_time_s(p.cluster, Collective::kReduceScatter, group, cp, sp);
    return c;
  }
  if (p.knobs.cp_comm == CpComm::kAllGather) {
    // The backward gathers K/V again (the forward keeps only the rank's own chunk) and returns
    // each chunk's dK/dV to its owner with a reduce-scatter.
    const double kv_all = cp * ring_kv_chunk_bytes(p);
    c.pre_s = collective_time_s(p.cluster, Collective::kAllGather, kv_all, cp, sp);
    c.post_s = collective_time_s(p.cluster, Collective::kReduceScatter, kv_all, cp, sp);
    return c;
  }
  c.hops = cp - 1;
  c.hop_s = ring_hop_time_s(p.cluster, ring_kv_chunk_bytes(p) + ring_dkv_chunk_bytes(p), cp, sp);
  c.post_s = ring_hop_time_s(p.cluster, ring_dkv_chunk_bytes(p), cp, sp);  // dK/dV home after the last block
  return c;
}

double ring_forward_buffer_bytes(const PlanSpec& p) {
  if (p.knobs.cp == 1) return 0.0;
  const double kv = ring_kv_chunk_bytes(p);
  // Per head group: the group's gathered K/V and the next group's being gathered (kv_buffer and
  // kv_buffer_copy), and the groups' outputs listed before their concatenation; no merge buffers
  // (each call covers the whole key range).
  if (gathers_per_head_group(p)) return 2 * gathered_group_bytes(p) + act_bytes(p) * q_elems(p);
  // ring: the chunk being computed on and the next one being received (double buffering; the
  // rank's own chunk is saved by the layer already). allgather: the cp gathered chunks.
  const double kv_buffers = p.knobs.cp_comm == CpComm::kRing ? 2 * kv : p.knobs.cp * kv;
  return kv_buffers + merge_buffer_bytes(p);
}

double ring_backward_buffer_bytes(const PlanSpec& p) {
  if (p.knobs.cp == 1) return 0.0;
  const double kv = ring_kv_chunk_bytes(p), dkv = ring_dkv_chunk_bytes(p);
  // Per head group: K/V double-buffered as in the forward, the group's dK/dV over the whole key
  // range (activation dtype), and with more than one group the contiguous K/V slice the gather
  // sends. dq, dk and dv are written in place into the gradients returned (one call per group
  // covers the whole key range: nothing accumulates). The flash kernel's own backward scratch is
  // priced as for one local call (memory_activations.cpp): a group's call has cp times the keys
  // and 1/G of the heads, the same at G == cp.
  if (gathers_per_head_group(p)) {
    const double groups = static_cast<double>(ring_kv_head_groups(p));
    return 3 * gathered_group_bytes(p) + (groups > 1 ? kv / groups : 0.0);
  }
  const double dq_accumulator = kFp32Bytes * p.model.q_dim() * local_tokens(p);  // dq summed over the steps
  if (p.knobs.cp_comm == CpComm::kAllGather) {
    // The gathered K/V and their gradient, written chunk by chunk in the activation dtype.
    return 2 * p.knobs.cp * kv + dq_accumulator;
  }
  // K/V double-buffered as in the forward; the dK/dV accumulator of the chunk held now and the
  // one being received from the previous rank.
  return 2 * kv + 2 * dkv + dq_accumulator;
}

double ring_communicator_bytes(const PlanSpec& p) {
  if (p.knobs.cp == 1) return 0.0;
  const GpuSpec& g = p.cluster.gpu;
  // A ring rank connects to two peers (one when cp is 2); a peer across nodes costs the network
  // channels' share of an NVLink peer's buffers (software_facts.hpp, as the all-to-all's).
  const double peers = std::min<double>(2.0, static_cast<double>(p.knobs.cp - 1));
  const bool net = group_crosses_nodes(p.cluster, p.knobs.cp, p.knobs.sp);
  const double share = net ? facts::kNcclNetChannelsPerPeer / facts::kNcclP2pChannelsPerPeer : 1.0;
  return g.nccl_gib_per_group * kGiB + peers * share * g.nccl_a2a_gib_per_peer * kGiB;
}

}  // namespace spplan::costmodel
