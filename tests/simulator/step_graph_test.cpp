// The step graph built from hand-written StepCosts (no costmodel numbers), scheduled and checked
// against schedules worked out by hand. Times in seconds, bytes in plain units.
#include "simulator/step_graph.hpp"

#include <gtest/gtest.h>

#include "simulator/analysis.hpp"
#include "simulator/simulate.hpp"
#include "tests/simulator/step_cost_fixtures.hpp"

namespace spplan::sim {
namespace {

using costmodel::StepCosts;
using testing::two_layer_costs;

double start_of(const SimResult& r, const std::string& name) {
  for (const SimEvent& e : r.events) {
    if (e.name == name) return e.start_s;
  }
  ADD_FAILURE() << "no event " << name;
  return -1;
}

// Compute stream: embed 0-1, fwd.L0 1-13, fwd.L1 13-25, loss 25-33, bwd.L1 33-55, bwd.L0 55-77,
// embed.bwd 77-78. Comm: reduce.L1 55-61 (hidden behind bwd.L0), reduce.L0 77-83, reduce.embed
// 83-85 (waits for the comm stream). Adam waits for every reduction: 85-88.
// Serial: 1+12+12+3+5+22+22+1 + 6+6+2 + 3 = 95. Critical path: bwd.L0 ends 77, reduce.L0 83,
// Adam 86. Exposed: a2a 2*2 + 2*2 = 8; ZeRO: compute idles 78..85 = 7.
TEST(StepGraph, TwoLayersOverlapWorkedByHand) {
  const StepCosts c = two_layer_costs();
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(r.step_time_s, 88);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 95);
  EXPECT_DOUBLE_EQ(c.serial_s(), 95);
  EXPECT_DOUBLE_EQ(r.critical_path_s, 86);
  EXPECT_DOUBLE_EQ(r.resource_busy_s[static_cast<int>(Resource::kCompute)], 81);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.a2a_s, 8);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.zero_s, 7);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.offload_s, 0);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L1.a2a_qkv"), 16);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L1.mlp"), 33);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.reduce.L1"), 55);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.reduce.embed"), 83);
  EXPECT_DOUBLE_EQ(start_of(r, "opt.adam"), 85);
}

TEST(StepGraph, TwoLayersNoOverlapIsTheSerialSum) {
  const StepCosts c = two_layer_costs();
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kNoOverlap);
  EXPECT_DOUBLE_EQ(r.step_time_s, 95);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.a2a_s, 8);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.zero_s, 14);
}

// Micro steps repeat forward and backward; one optimizer step at the end. With two micro steps
// micro 1's embed.fwd starts when micro 0's embed.bwd ends (78), and micro 0's last reductions
// (77-85) overlap micro 1's forward. Micro 1 is micro 0 shifted by 78: bwd.L0 ends 155,
// reduce.L0 155-161, reduce.embed 161-163, Adam 163-166. Serial 2*92 + 3 = 187.
TEST(StepGraph, MicroStepsRepeatBeforeOneOptimizerStep) {
  StepCosts c = two_layer_costs();
  c.micro_steps = 2;
  c.reducing_micro_steps = 2;  // ZeRO 2/3: every backward reduces
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(start_of(r, "m1.embed.fwd"), 78);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.reduce.embed"), 83);
  EXPECT_DOUBLE_EQ(start_of(r, "opt.adam"), 163);
  EXPECT_DOUBLE_EQ(r.step_time_s, 166);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 187);
  EXPECT_DOUBLE_EQ(c.serial_s(), 187);
}

// ZeRO 0/1 reduce only at the accumulation boundary: micro step 0 has no reductions, so the
// serial time loses one micro step's 2 x 6 + 2 of reductions.
TEST(StepGraph, AccumulatingMicroStepsDoNotReduce) {
  StepCosts c = two_layer_costs();
  c.micro_steps = 2;
  c.reducing_micro_steps = 1;
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_LT(start_of(r, "m1.reduce.embed"), r.step_time_s);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 187 - 14);
  EXPECT_DOUBLE_EQ(c.serial_s(), 187 - 14);
  for (const auto& e : r.events) EXPECT_NE(e.name.rfind("m0.reduce", 0), 0u) << e.name;
}

// ZeRO-3 gathers, one use ahead. Only the MLP and the ends cost time: forward mlp 4, backward
// mlp 8, embed fwd/bwd 1, loss fwd/bwd 2; gather 3 per layer use, 2 per embedding/head use.
// Uses: embed.fwd, fwd.L0, fwd.L1, head, bwd.L1, bwd.L0, embed.bwd; gather k may start when use
// k-2 has ended.
//   comm:    g(embed.fwd) 0-2, g(fwd.L0) 2-5, g(fwd.L1) 5-8, g(head) 9-11 (after fwd.L0 ends),
//            g(bwd.L1) 13-16 (after fwd.L1), g(bwd.L0) 17-20 (after the loss), g(embed.bwd) 25-27
//   compute: embed.fwd 2-3, fwd.L0 5-9, fwd.L1 9-13, loss 13-17, bwd.L1 17-25, bwd.L0 25-33,
//            embed.bwd 33-34.
// Step 34; serial 30 compute + 4*3 + 3*2 gathers = 48; exposed ZeRO 0-2 and 3-5 = 4.
StepCosts gather_costs() {
  StepCosts c;
  c.layers = 2;
  c.forward.mlp_s = 4;
  c.backward.mlp_s = 8;
  c.embed_fwd_s = c.embed_bwd_s = 1;
  c.loss_fwd_s = c.loss_bwd_s = 2;
  c.param_gather_s = 3;
  c.embed_gather_s = 2;
  return c;
}

TEST(StepGraph, Zero3GathersPrefetchOneUseAhead) {
  const StepCosts c = gather_costs();
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(start_of(r, "gather.m0.fwd.L1"), 5);
  EXPECT_DOUBLE_EQ(start_of(r, "gather.m0.head"), 9);
  EXPECT_DOUBLE_EQ(start_of(r, "gather.m0.bwd.L1"), 13);
  EXPECT_DOUBLE_EQ(start_of(r, "gather.m0.bwd.L0"), 17);
  EXPECT_DOUBLE_EQ(start_of(r, "gather.m0.embed.bwd"), 25);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L0.mlp"), 25);
  EXPECT_DOUBLE_EQ(r.step_time_s, 34);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 48);
  EXPECT_DOUBLE_EQ(c.serial_s(), 48);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.zero_s, 4);
}

// Gathered bytes: layer 100, embedding 300, prefetch window 10. A gather allocates the window
// when it starts, the use the rest when it begins. No-overlap: g(embed.fwd) 0-2 (+10),
// g(fwd.L0) 2-5 (+10), embed.fwd 5-6 (+290): 310 at t=5, the peak (embedding + fwd.L0's window).
// Overlap: the same 310 is reached at t=2 when g(fwd.L0) starts right after embed.fwd began.
TEST(StepGraph, Zero3GatheredMemoryPeak) {
  MemoryTerms t;
  t.layer_gathered_bytes = 100;
  t.embedding_gathered_bytes = 300;
  t.prefetch_window_bytes = 10;
  const SimResult serial = simulate(gather_costs(), t, Mode::kNoOverlap);
  EXPECT_DOUBLE_EQ(serial.peak_memory_bytes, 310);
  EXPECT_DOUBLE_EQ(serial.peak_time_s, 5);
  EXPECT_EQ(serial.peak_op, "m0.embed.fwd");
  EXPECT_DOUBLE_EQ(serial.peak_alive.params_bytes, 310);
  const SimResult overlap = simulate(gather_costs(), t, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(overlap.peak_memory_bytes, 310);
  EXPECT_DOUBLE_EQ(overlap.peak_time_s, 2);
  EXPECT_EQ(overlap.peak_op, "gather.m0.fwd.L0");
  EXPECT_DOUBLE_EQ(overlap.memory.back().bytes, 0);  // everything allocated is freed
}

// Reductions slower than the backward: forward mlp 1, backward mlp 2, reduce 5 per layer, 3
// layers, reduce copy 1 byte. A backward waits for the reduction two layers above it.
//   compute: fwd 0-3, bwd.L2 3-5, bwd.L1 5-7, bwd.L0 waits for reduce.L2: 10-12
//   comm:    reduce.L2 5-10, reduce.L1 10-15, reduce.L0 15-20; Adam (0 s) at 20.
// Critical path 17 (bwd.L2 5, reduce.L2 10, bwd.L0 12, reduce.L0 17): the comm stream (15 s of
// work, first free at 5) sets the step. At most two reduce copies are alive: L2's and L1's from 5,
// L1's and L0's from 10 (without the hold bwd.L0 would start at 7 with three).
TEST(StepGraph, ReductionsFallingBehindHoldTheBackward) {
  StepCosts c;
  c.layers = 3;
  c.forward.mlp_s = 1;
  c.backward.mlp_s = 2;
  c.grad_reduce_s = 5;
  MemoryTerms t;
  t.reduce_copy_bytes = 1;
  const SimResult r = simulate(c, t, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L1.mlp"), 5);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L0.mlp"), 10);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.reduce.L0"), 15);
  EXPECT_DOUBLE_EQ(r.step_time_s, 20);
  EXPECT_DOUBLE_EQ(r.critical_path_s, 17);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 24);
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, 2);
  EXPECT_DOUBLE_EQ(r.peak_time_s, 5);
}

}  // namespace
}  // namespace spplan::sim

namespace spplan::sim {
namespace {

// Ring attention on the two-layer step: attention in 2 blocks (forward 2 + 2, backward 4 + 4),
// one K/V hop of 3 on the comm stream per pass, and in the backward the last dK/dV hop (1) in
// line after the blocks. Forward L0: a2a ends 5, block0 5-7 while hop0 runs 5-8, block1 waits
// for it: 8-10, so each forward layer takes 13 (1 exposed). Backward L1 (from 35): mlp 35-39,
// out_proj 39-41, a2a 41-42, block0 42-46 beside hop0 42-45 (hidden), block1 46-50, post 50-51:
// 23. The step: 88 + 2 x 1 + 2 x 1 = 92; serial 95 + 2 x (3 + 3 + 1) = 109; ring exposed 4.
// The two-layer step with attention in 2 blocks and one K/V hop of 3 a pass, the backward's last
// dK/dV hop of 1 after its blocks.
costmodel::StepCosts two_block_ring_costs() {
  costmodel::StepCosts c = testing::two_layer_costs();
  c.forward.attention_blocks = 2;
  c.forward.cp_hops = 1;
  c.forward.cp_hop_s = 3;
  c.backward.attention_blocks = 2;
  c.backward.cp_hops = 1;
  c.backward.cp_hop_s = 3;
  c.backward.cp_post_s = 1;
  return c;
}

TEST(StepGraph, RingHopsOverlapAttentionBlocksWorkedByHand) {
  const costmodel::StepCosts c = two_block_ring_costs();
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(r.step_time_s, 92);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 109);
  EXPECT_DOUBLE_EQ(c.serial_s(), 109);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.ring_s, 4);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.a2a_s, 8);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.attention.b0"), 5);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.ring_hop0"), 5);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.attention.b1"), 8);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L1.ring_hop0"), 42);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L1.attention.b1"), 46);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.bwd.L1.ring_post"), 50);
  for (const SimEvent& e : r.events) {
    if (e.name.find("ring_hop") != std::string::npos) {
      EXPECT_EQ(e.resource, Resource::kComm) << e.name;  // the communication lane
      EXPECT_EQ(e.category, OpCategory::kRing) << e.name;
    }
  }
  // The estimate's overlap rule prices each layer pass the same way.
  EXPECT_DOUBLE_EQ(c.forward.total_s(), 13);
  EXPECT_DOUBLE_EQ(c.backward.total_s(), 23);
  const SimResult serial = simulate(c, MemoryTerms{}, Mode::kNoOverlap);
  EXPECT_DOUBLE_EQ(serial.step_time_s, 109);
}

// The same forward with merges of 1 a pass (0.5 after each block): block0 5-7, merge0 7-7.5 while
// hop0 runs 5-8, block1 8-10, merge1 10-10.5. The hop now hides behind 2.5 (block and merge), so
// each forward layer takes 13 + 1 - 0.5 = 13.5: the step 92 + 2 x 0.5 = 93, ring exposed 3.
TEST(StepGraph, RingMergesFollowTheirBlocksOnTheComputeStream) {
  costmodel::StepCosts c = two_block_ring_costs();
  c.forward.cp_merge_s = 1;
  const SimResult r = simulate(c, MemoryTerms{}, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.attention.merge0"), 7);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.attention.b1"), 8);
  EXPECT_DOUBLE_EQ(start_of(r, "m0.fwd.L0.attention.merge1"), 10);
  for (const SimEvent& e : r.events) {
    if (e.name.find("attention.merge") != std::string::npos) {
      EXPECT_EQ(e.resource, Resource::kCompute) << e.name;
      EXPECT_EQ(e.category, OpCategory::kCompute) << e.name;
    }
  }
  EXPECT_DOUBLE_EQ(c.forward.total_s(), 13.5);
  EXPECT_DOUBLE_EQ(r.step_time_s, 93);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.ring_s, 3);
}

}  // namespace
}  // namespace spplan::sim
