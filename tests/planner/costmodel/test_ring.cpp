// Ring attention (cp) in the costmodel: hop times, overlap with attention blocks, the all-gather
// variant, memory terms and placement, worked by hand on a GPU whose numbers are written here
// (not a preset, so recalibrating a preset does not move these tests).
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/costmodel/comm.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/ring.hpp"
#include "planner/costmodel/step_costs.hpp"

namespace spplan::costmodel {
namespace {

// Llama-3.1-8B shapes (32 heads, 8 kv heads, head_dim 128, hidden 4096) on 8-GPU nodes with
// NVLink 450 GB/s and a 50 GB/s NIC per GPU, both at 80%, 20 us per transfer.
PlanSpec ring_plan(int64_t gpus, int64_t sp, int64_t cp, int64_t seq) {
  PlanSpec p;
  p.model = load_model("llama-3.1-8b").value();
  GpuSpec& g = p.cluster.gpu;
  g.name = "test-gpu";
  g.memory_gib = 80;
  g.bf16_tflops = 1000;
  g.hbm_GBps = 3000;
  g.gpus_per_node = 8;
  g.intra_node_GBps = 450;
  g.inter_node_GBps = 50;
  g.pcie_GBps = 64;
  g.host_memory_gib_per_node = 2000;
  g.host_adam_params_per_s = 1e9;
  g.comm_efficiency = 0.8;
  g.collective_latency_s = 2e-5;
  p.cluster.num_gpus = gpus;
  p.seq_len = seq;
  p.knobs.sp = sp;
  p.knobs.cp = cp;
  p.knobs.tiled_loss = true;
  return p;
}

TEST(Ring, HopsHiddenBehindLongBlocks) {
  // sp 8 inside each node, cp 2 across the two nodes, 1M tokens: s = 2^20 / 16 = 65536 local
  // tokens; K and V after the all-to-all: 2 x 2 B x 65536 x (128 x 8 kv heads) = 268435456 B.
  const PlanSpec p = ring_plan(16, 8, 2, 1 << 20);
  EXPECT_DOUBLE_EQ(ring_kv_chunk_bytes(p), 268435456.0);
  // The ring spans 2 nodes (stride 8 x 2 ranks = 16 GPUs): the NIC at 50 x 0.8 = 40 GB/s.
  // Forward: 1 hop = 2e-5 + 268435456 / 40e9 = 0.0067308864 s.
  const RingPassComm fwd = ring_forward_comm(p);
  EXPECT_EQ(fwd.hops, 1);
  EXPECT_NEAR(fwd.hop_s, 0.0067308864, 1e-12);
  EXPECT_EQ(fwd.pre_s, 0.0);
  // Backward: K/V (bf16) + dK/dV (fp32, twice the bytes) per hop = 805306368 B: 0.0201526592 s;
  // then dK/dV home: 536870912 B: 0.0134417728 s, exposed.
  const RingPassComm bwd = ring_backward_comm(p);
  EXPECT_EQ(bwd.hops, 1);
  EXPECT_NEAR(bwd.hop_s, 0.0201526592, 1e-12);
  EXPECT_NEAR(bwd.post_s, 0.0134417728, 1e-12);
  // Each block is 1/4 of the sequence's causal work for 4 heads: 4 x 2 x 2^40 x 128 / 4 =
  // 2.81e14 FLOPs, ~0.8 s at 1000 TFLOPs x 0.35: far longer than a hop, so only the last
  // dK/dV hop is exposed.
  const StepCosts c = step_costs(p);
  EXPECT_EQ(c.forward.attention_blocks, 2);
  EXPECT_NEAR(c.forward.attention_block_s(),
              attention_fwd_time_s(p.cluster.gpu, p.stack.attention, 4.0 * 2 * 1099511627776.0 * 128 / 4, 2), 1e-12);
  EXPECT_EQ(c.forward.cp_exposed_s(), 0.0);
  EXPECT_NEAR(c.backward.cp_exposed_s(), 0.0134417728, 1e-12);
  EXPECT_NEAR(c.backward.cp_comm_s(), 0.0201526592 + 0.0134417728, 1e-12);
}

TEST(Ring, HopOutlastingItsBlockIsExposedByTheExcess) {
  // Ring only over 16 GPUs, 16384 tokens: s = 1024, one K/V chunk 2 x 2 x 1024 x 1024 = 4194304 B,
  // hop = 2e-5 + 4194304 / 40e9 = 1.248576e-4 s; a block is 32 heads x 2 x 16384^2 x 128 / 256
  // = 8.6e9 FLOPs, ~2.5e-5 s: each of the 15 hops shows its excess over the block and its merge.
  const PlanSpec p = ring_plan(16, 1, 16, 16384);
  const StepCosts c = step_costs(p);
  const double block = attention_fwd_time_s(p.cluster.gpu, p.stack.attention, 32.0 * 2 * 268435456.0 * 128 / 256, 2);
  EXPECT_NEAR(c.forward.attention_block_s(), block, 1e-15);
  EXPECT_NEAR(c.forward.cp_hop_s, 1.248576e-4, 1e-12);
  // A hop hides behind its block and the block's merge (MergesPricedAsTheirMemoryTraffic), 1/16
  // of the pass's merges.
  const double window = block + c.forward.cp_merge_s / 16;
  EXPECT_GT(c.forward.cp_hop_s, window);
  EXPECT_NEAR(c.forward.cp_exposed_s(), 15 * (1.248576e-4 - window), 1e-12);
  // The estimate waits for the exposed part once per layer pass (forward, recompute, backward).
  const Estimate e = estimate(p);
  EXPECT_NEAR(e.time.exposed_cp_s, c.micro_step_cp_exposed_s(), 1e-12);
  EXPECT_NEAR(e.time.cp_comm_s, c.micro_step_cp_comm_s(), 1e-12);
  EXPECT_GT(e.time.cp_comm_s, e.time.exposed_cp_s);
  EXPECT_DOUBLE_EQ(e.time.serial_step_time_s, c.serial_s());
}

// The merges, counted from the engine's ring_attention.cpp: ring over 16 GPUs at 32768 tokens,
// s = 2048 local tokens, q = 4096 wide: 8388608 query elements; K and V 2 x 2048 x 1024 = 4194304.
TEST(Ring, MergesPricedAsTheirMemoryTraffic) {
  const PlanSpec p = ring_plan(16, 1, 16, 32768);
  // Forward: 15 later blocks of 32 + 2 B an element, the upcast and the cast back (2 + 4 B each),
  // about 10 kernels a merge and 2 casts.
  const RingMergeTraffic fwd = ring_forward_merge(p);
  EXPECT_DOUBLE_EQ(fwd.bytes, 8388608.0 * (15 * 34 + 2 * 6));
  EXPECT_DOUBLE_EQ(fwd.kernels, 152);
  // Backward: 16 blocks add dQ, dK, dV (4 + 2 read, 4 written), zeroed (4) and cast back (4 + 2).
  const RingMergeTraffic bwd = ring_backward_merge(p);
  EXPECT_DOUBLE_EQ(bwd.bytes, (8388608.0 + 4194304.0) * (16 * 10 + 4 + 6));
  EXPECT_DOUBLE_EQ(bwd.kernels, 54);
  const StepCosts c = step_costs(p);
  EXPECT_NEAR(c.forward.cp_merge_s, elementwise_time_s(p.cluster.gpu, fwd.bytes, 2, fwd.kernels), 1e-15);
  EXPECT_NEAR(c.backward.cp_merge_s, elementwise_time_s(p.cluster.gpu, bwd.bytes, 2, bwd.kernels), 1e-15);
  EXPECT_DOUBLE_EQ(c.recompute.cp_merge_s, c.forward.cp_merge_s);  // the recompute merges again
  // On the compute stream: part of the pass's compute, never hidden.
  EXPECT_NEAR(c.forward.compute_s(), c.forward.norm_s + c.forward.qkv_s + c.forward.attention_s +
                                         c.forward.cp_merge_s + c.forward.out_proj_s + c.forward.mlp_s, 1e-15);
  // Ulysses alone merges nothing.
  EXPECT_EQ(ring_forward_merge(ring_plan(16, 16, 1, 32768)).bytes, 0.0);
  EXPECT_EQ(step_costs(ring_plan(16, 16, 1, 32768)).backward.cp_merge_s, 0.0);
}

// Inside one node, at equal degree and the same causal FLOPs, the ring pays what Ulysses does not:
// the merges and the hops a short block cannot hide. Ulysses's all-to-alls are cheaper there
// (jzhang38/EasyContext#37 measured Ulysses about 15% faster on 8 A100s).
TEST(Ring, SlowerThanUlyssesInsideANodeAtShortSequences) {
  const double ring = estimate(ring_plan(8, 1, 8, 32768)).time.step_time_s;
  const double ulysses = estimate(ring_plan(8, 8, 1, 32768)).time.step_time_s;
  EXPECT_GT(ring, 1.05 * ulysses);
  // At a million tokens attention's s^2 outgrows the merges' s: the two come within a few percent.
  const double ring_1m = estimate(ring_plan(8, 1, 8, 1 << 20)).time.step_time_s;
  const double ulysses_1m = estimate(ring_plan(8, 8, 1, 1 << 20)).time.step_time_s;
  EXPECT_GT(ring_1m, ulysses_1m);
  EXPECT_LT(ring_1m, 1.05 * ulysses_1m);
}

TEST(Ring, AllGatherVariantIsNeverHidden) {
  // Same layout as the first test, cp_comm allgather: an all-gather of 2 chunks over 2 ranks
  // crossing nodes: 2e-5 + 536870912 x 1/2 / 40e9 = 0.0067308864 s, in the forward; the backward
  // gathers again and reduce-scatters dK/dV: the same time each.
  PlanSpec p = ring_plan(16, 8, 2, 1 << 20);
  p.knobs.cp_comm = CpComm::kAllGather;
  const StepCosts c = step_costs(p);
  EXPECT_NEAR(c.forward.cp_pre_s, 0.0067308864, 1e-12);
  EXPECT_EQ(c.forward.cp_hops, 0);
  EXPECT_NEAR(c.forward.cp_exposed_s(), 0.0067308864, 1e-12);
  EXPECT_NEAR(c.backward.cp_exposed_s(), 2 * 0.0067308864, 1e-12);
  PlanSpec ring = p;
  ring.knobs.cp_comm = CpComm::kRing;
  EXPECT_LT(estimate(ring).time.step_time_s, estimate(p).time.step_time_s);
}

TEST(Ring, PlacementPricesEachGroupOnItsLinks) {
  // sp 4 x cp 2 = 8 ranks: the ring (stride 4) stays in the node: NVLink at 360 GB/s.
  const PlanSpec inside = ring_plan(8, 4, 2, 1 << 20);
  EXPECT_FALSE(group_crosses_nodes(inside.cluster, 2, 4));
  EXPECT_NEAR(ring_forward_comm(inside).hop_s, 2e-5 + ring_kv_chunk_bytes(inside) / 360e9, 1e-12);
  // sp 8 x cp 2 on 16 GPUs: the Ulysses all-to-all stays on NVLink, the ring crosses.
  EXPECT_FALSE(group_crosses_nodes(inside.cluster, 8, 1));
  EXPECT_TRUE(group_crosses_nodes(inside.cluster, 2, 8));
  // A strided all-gather over 2 nodes runs at the NIC's rate: 2e-5 + 1e9 / 2 / 40e9.
  EXPECT_NEAR(collective_time_s(inside.cluster, Collective::kAllGather, 1e9, 2, 8), 2e-5 + 0.5e9 / 40e9, 1e-12);
  EXPECT_NEAR(collective_time_s(inside.cluster, Collective::kAllGather, 1e9, 2, 1), 2e-5 + 0.5e9 / 360e9, 1e-12);
}

TEST(Ring, MemoryTermsWorkedByHand) {
  const PlanSpec p = ring_plan(16, 8, 2, 1 << 20);
  // s = 65536, q width 4096, 32 heads. Forward: two K/V chunks (2 x 268435456) + the fp32
  // running output and the bf16 block output (6 B x 4096 x 65536 = 1610612736) + two fp32
  // log-sum-exps (8 B x 32 x 65536 = 16777216) = 2164260864 B.
  EXPECT_DOUBLE_EQ(ring_forward_buffer_bytes(p), 2164260864.0);
  // Backward: two K/V chunks (536870912) + two fp32 dK/dV (1073741824) + fp32 dq (4 x 4096 x
  // 65536 = 1073741824) = 2684354560 B.
  EXPECT_DOUBLE_EQ(ring_backward_buffer_bytes(p), 2684354560.0);
  // allgather: cp chunks gathered (2 x 268435456) + merge (1627389952) forward; gathered K/V and
  // their gradients (2 x 2 x 268435456) + dq (1073741824) backward.
  PlanSpec ag = p;
  ag.knobs.cp_comm = CpComm::kAllGather;
  EXPECT_DOUBLE_EQ(ring_forward_buffer_bytes(ag), 536870912.0 + 1627389952.0);
  EXPECT_DOUBLE_EQ(ring_backward_buffer_bytes(ag), 1073741824.0 + 1073741824.0);
  // Both sit in the peak's moments: the forward buffers in the forward, the backward's in the
  // layer backward's attention moment.
  const MemoryPhases phases = memory_phases(p);
  PlanSpec no_ring = p;
  no_ring.knobs.cp = 1;
  no_ring.knobs.sp = 16;  // the same 65536 local tokens by Ulysses alone
  EXPECT_DOUBLE_EQ(local_tokens(no_ring), local_tokens(p));
  EXPECT_EQ(layer_backward_moments(p).ring, 2684354560.0);
  EXPECT_EQ(layer_backward_moments(no_ring).ring, 0.0);
  EXPECT_GT(phases.forward.buffers_bytes, 2164260864.0);
  // No ring: no ring terms, no ring communicator.
  EXPECT_EQ(ring_forward_buffer_bytes(no_ring), 0.0);
  EXPECT_EQ(ring_communicator_bytes(no_ring), 0.0);
  EXPECT_GT(ring_communicator_bytes(p), 0.0);
}

TEST(Ring, CpOneIsTheUlyssesModelUnchanged) {
  PlanSpec p = ring_plan(8, 8, 1, 1 << 18);
  const StepCosts c = step_costs(p);
  EXPECT_EQ(c.forward.attention_blocks, 1);
  EXPECT_EQ(c.forward.cp_comm_s(), 0.0);
  EXPECT_EQ(c.backward.cp_exposed_s(), 0.0);
  // One attention call over the whole sequence for 32/8 heads.
  EXPECT_NEAR(c.forward.attention_s,
              attention_fwd_time_s(p.cluster.gpu, p.stack.attention, causal_attention_fwd_flops(1 << 18, 4, 128, 1), 2),
              1e-15);
}

TEST(Ring, ZigzagBlocksShareTheCausalWork) {
  // The rank's attention over cp blocks adds up to 1/(sp x cp) of the sequence's causal FLOPs at
  // the same rate (only the per-call fixed cost is paid cp times).
  const PlanSpec ring = ring_plan(8, 2, 4, 1 << 17);
  const PlanSpec uly = ring_plan(8, 8, 1, 1 << 17);
  const double fixed = ring.cluster.gpu.attention_fixed_s;
  EXPECT_NEAR(step_costs(ring).forward.attention_s - 4 * fixed, step_costs(uly).forward.attention_s - fixed, 1e-12);
}

// Short blocks. On the H100 a backward call costs 0.33 ms beyond its FLOPs (measured), so
// a ring of 8 over 32K tokens (4K-token blocks) pays 7 of them more than Ulysses' one long call.
TEST(Ring, EachBlockPaysTheKernelsFixedCost) {
  PlanSpec ring = ring_plan(8, 1, 8, 1 << 15);
  PlanSpec uly = ring_plan(8, 8, 1, 1 << 15);
  ring.cluster.gpu = uly.cluster.gpu = *load_gpu("h100-80gb");
  const double bwd_fixed = ring.cluster.gpu.attention_bwd_fixed_s;
  ASSERT_GT(bwd_fixed, 3e-4);
  const double ring_bwd = step_costs(ring).backward.attention_s, uly_bwd = step_costs(uly).backward.attention_s;
  EXPECT_NEAR(ring_bwd - uly_bwd, 7 * bwd_fixed, 1e-9);
  EXPECT_GT(ring_bwd / uly_bwd, 1.2);  // at 32K the fixed costs are a fifth of the ring's attention
}

// A ring's off-diagonal blocks are non-causal calls: only the diagonal block's S / cp rows pay the
// kernel's extra keys (GpuSpec::attention_causal_extra_keys), where Ulysses' one call pays them for
// all S rows; under a window twice (the window's first tile is cut too).
TEST(Ring, OnlyTheDiagonalBlockPaysTheCausalTiles) {
  PlanSpec ring = ring_plan(8, 2, 4, 1 << 17);
  PlanSpec uly = ring_plan(8, 8, 1, 1 << 17);
  const double S = 1 << 17;
  EXPECT_DOUBLE_EQ(ring_rank_attention_work(ring, S, 0).diagonal_rows, S / 4);
  EXPECT_DOUBLE_EQ(ring_rank_attention_work(ring, S, 4096).diagonal_rows, S / 2);
  EXPECT_DOUBLE_EQ(ring_rank_attention_work(uly, S, 0).diagonal_rows, S);
  auto extra_s = [](PlanSpec p, double heads) {
    const double before = step_costs(p).forward.attention_s;
    p.cluster.gpu.attention_causal_extra_keys = 512;
    const double flops = attention_pairs_fwd_flops(ring_rank_attention_work(p, p.seq_len, 0).diagonal_rows * 512, heads, 128, 1);
    return std::pair{step_costs(p).forward.attention_s - before,
                     flops / (p.cluster.gpu.bf16_tflops * 1e12 * p.cluster.gpu.attention_efficiency)};
  };
  const auto [ring_extra, ring_want] = extra_s(ring, 16);  // 32 heads over sp 2
  const auto [uly_extra, uly_want] = extra_s(uly, 4);      // over sp 8
  EXPECT_NEAR(ring_extra, ring_want, 1e-12);
  EXPECT_NEAR(uly_extra, uly_want, 1e-12);
  // Per head: the ring's rank pays a quarter of the rows Ulysses' rank does.
  EXPECT_NEAR(ring_extra / 16, uly_extra / 4 / 4, 1e-12);
}

// Axolotl's ring (ring-flash-attn's llama3 all-gather over contiguous shards), set on the stack
// by hand so a record's change does not move these numbers.
PlanSpec contiguous_allgather_plan(int64_t cp, int64_t kv_heads_per_call) {
  PlanSpec p = ring_plan(8, 1, cp, 1 << 20);
  p.knobs.cp_comm = CpComm::kAllGather;
  p.stack.ring_contiguous_shards = true;
  p.stack.allgather_kv_heads_per_call = kv_heads_per_call;
  return p;
}

TEST(Ring, ContiguousShardsMakeTheLastRankDoTwoCpMinusOneOverCpOfABalancedRank) {
  // cp 8: the last rank attends its 1/8 of the queries to all keys, 7 whole blocks and the causal
  // half of one: 7.5 blocks of (S/8)^2 pairs, where a balanced rank does 4; 15/8 of it.
  PlanSpec p = contiguous_allgather_plan(8, 0);
  p.knobs.cp_comm = CpComm::kRing;
  const double S = 1 << 20, balanced = S * S / 2 / 8;
  EXPECT_EQ(ring_attention_calls(p), 8);
  EXPECT_NEAR(ring_rank_attention_pairs(p, S, 0) / balanced, 15.0 / 8.0, 1e-12);
  p.stack.ring_contiguous_shards = false;
  EXPECT_NEAR(ring_rank_attention_pairs(p, S, 0) / balanced, 1.0, 1e-12);
  p.knobs.cp = 1;
  EXPECT_EQ(ring_attention_calls(p), 1);
  EXPECT_DOUBLE_EQ(ring_rank_attention_pairs(p, S, 0), S * S / 2);
}

// A sliding window of w keys: a rank whose shard starts past the window attends each of its S/cp
// queries to w keys, whatever its place; only the first w queries of the sequence see fewer. The
// contiguous ring's last rank then does no more than the others, and the zigzag's balance holds.
TEST(Ring, AWindowGivesEveryRankItsShardTimesTheWindow) {
  PlanSpec p = contiguous_allgather_plan(8, 0);
  const double S = 1 << 20, w = 4096, shard = S / 8;
  EXPECT_DOUBLE_EQ(ring_rank_attention_pairs(p, S, w), shard * w);
  p.stack.ring_contiguous_shards = false;  // zigzag: chunk 2 cp - 1 (S/16 queries x w) and chunk r
  EXPECT_DOUBLE_EQ(ring_rank_attention_pairs(p, S, w), shard * w);
  // A window as long as the sequence is causal attention.
  EXPECT_NEAR(ring_rank_attention_pairs(p, S, S), ring_rank_attention_pairs(p, S, 0), 1e-3);
  // The whole sequence at cp 1: S w - w^2 / 2.
  p.knobs.cp = 1;
  EXPECT_DOUBLE_EQ(ring_rank_attention_pairs(p, S, w), S * w - w * w / 2);
}

// Gemma 3's and gpt-oss's layers mix windowed and full attention: a rank's attention FLOPs are the
// layer-weighted mean of the two kinds' slowest-rank pairs.
TEST(Ring, WindowedAndFullLayersWeighTheRanksAttention) {
  PlanSpec p = contiguous_allgather_plan(8, 0);
  p.knobs.cp_comm = CpComm::kRing;
  p.model.sliding_window = 4096;
  p.model.full_attention_layers = p.model.num_hidden_layers / 4;
  const double S = 1 << 20, layers = static_cast<double>(p.model.num_hidden_layers);
  const double windowed = layers - static_cast<double>(p.model.full_attention_layers);
  const double pairs = (windowed * (S / 8 * 4096) + (layers - windowed) * ring_rank_attention_pairs(p, S, 0)) / layers;
  const double flops = attention_pairs_fwd_flops(pairs, 32, 128, 1) / 8;  // one of 8 blocks, 32 heads
  EXPECT_NEAR(step_costs(p).forward.attention_s, 8 * attention_fwd_time_s(p.cluster.gpu, p.stack.attention, flops, 2),
              1e-9);
}

TEST(Ring, ContiguousShardsCostTheLastRanksAttention) {
  // The same block count, each block 15/8 of the zigzag's FLOPs: the step's attention follows.
  PlanSpec zigzag = contiguous_allgather_plan(8, 0);
  zigzag.knobs.cp_comm = CpComm::kRing;
  zigzag.stack.ring_contiguous_shards = false;
  PlanSpec contiguous = zigzag;
  contiguous.stack.ring_contiguous_shards = true;
  const double block_flops = 32.0 * 2 * 1099511627776.0 * 128 / 64;  // 32 heads, 1/64 of the causal FLOPs
  const GpuSpec& g = zigzag.cluster.gpu;
  EXPECT_NEAR(step_costs(zigzag).forward.attention_s, 8 * attention_fwd_time_s(g, zigzag.stack.attention, block_flops, 2),
              1e-9);
  EXPECT_NEAR(step_costs(contiguous).forward.attention_s,
              8 * attention_fwd_time_s(g, contiguous.stack.attention, block_flops * 15 / 8, 2), 1e-9);
  EXPECT_NEAR(step_costs(contiguous).backward.attention_s,
              8 * attention_bwd_time_s(g, contiguous.stack.attention, block_flops * 15 / 8, 2), 1e-9);
}

TEST(Ring, AllGatherPerKvHeadGroupHidesAllButTheFirstGather) {
  // One key-value head per call, 8 kv heads: 8 calls, each over the whole gathered key range. A
  // group's K and V over the sequence: 2 x 2 B x 2^20 x 128 = 536870912 B, all-gathered inside the
  // node at 450 x 0.8 GB/s.
  const PlanSpec p = contiguous_allgather_plan(8, 1);
  EXPECT_EQ(p.model.kv_heads_per_rank(p.knobs.sp), 8);
  EXPECT_EQ(ring_kv_head_groups(p), 8);
  EXPECT_EQ(ring_attention_calls(p), 8);
  const double group = 536870912.0;
  EXPECT_DOUBLE_EQ(8 * ring_kv_chunk_bytes(p) / 8, group);
  const double gather = collective_time_s(p.cluster, Collective::kAllGather, group, 8, 1);
  const RingPassComm fwd = ring_forward_comm(p);
  EXPECT_NEAR(fwd.pre_s, gather, 1e-15);  // the first group's gather waits
  EXPECT_EQ(fwd.hops, 7);                 // the others run behind the previous group's call
  EXPECT_NEAR(fwd.hop_s, gather, 1e-15);
  EXPECT_EQ(fwd.post_s, 0.0);
  // Backward: the same gathers, and each group's dK/dV reduce-scatter waits on the compute stream.
  const RingPassComm bwd = ring_backward_comm(p);
  EXPECT_EQ(bwd.hops, 7);
  EXPECT_NEAR(bwd.post_s, 8 * collective_time_s(p.cluster, Collective::kReduceScatter, group, 8, 1), 1e-15);
  // Memory: two group buffers and the listed outputs (forward); two K/V buffers, the dK/dV buffer
  // and the contiguous slice (backward). q: 4096 x 2^17 local tokens in bf16.
  const double q_bytes = 2.0 * 4096 * 131072;
  EXPECT_DOUBLE_EQ(ring_forward_buffer_bytes(p), 2 * group + q_bytes);
  EXPECT_DOUBLE_EQ(ring_backward_buffer_bytes(p), 3 * group + ring_kv_chunk_bytes(p) / 8);
  // All heads at once (the torch variant) keeps the single exposed gather.
  const PlanSpec all = contiguous_allgather_plan(8, 0);
  EXPECT_EQ(ring_forward_comm(all).hops, 0);
  EXPECT_NEAR(ring_forward_comm(all).pre_s, collective_time_s(all.cluster, Collective::kAllGather, 8 * group, 8, 1),
              1e-15);
}

TEST(Ring, AllGatherGroupMustDivideTheRanksKvHeads) {
  PlanSpec p = contiguous_allgather_plan(8, 3);
  p.stack.trainer = "axolotl";
  const Status s = check_plan(p, plan_file_key);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("key \"knobs.cp_comm\": value \"allgather\" runs 3 key-value heads per call (trainer axolotl), "
                             "which does not divide the 8 key-value heads of a rank"),
            std::string::npos)
      << s.message();
  // The contiguous split needs sp x cp equal shards only, not the zigzag's 2 x sp x cp.
  p.stack.allgather_kv_heads_per_call = 1;
  p.seq_len = 8 * 1001;
  EXPECT_TRUE(check_plan(p, plan_file_key).is_ok()) << check_plan(p, plan_file_key).message();
}

}  // namespace
}  // namespace spplan::costmodel
