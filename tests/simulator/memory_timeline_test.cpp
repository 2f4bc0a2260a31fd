// Memory timelines of known schedules (bytes in plain units).
#include "simulator/memory_timeline.hpp"

#include <gtest/gtest.h>

#include "simulator/simulate.hpp"
#include "tests/simulator/step_cost_fixtures.hpp"

namespace spplan::sim {
namespace {

using costmodel::StepCosts;

// A (compute 2) allocates 50 activations and frees them at its end but leaves 20; B (comm 3,
// starts with A) allocates 30 buffers for its duration. Persistent 100 params, exempt from the
// allocator slack; 0.1 of the bytes beyond them is reported as overhead.
//   t=0: 100 + 50 + 30 = 180 allocated -> reported 180 + 0.1 * 80 = 188 (the peak, at B's start)
//   t=2: A ends: 100 + 20 + 30 = 150 -> 155;  t=3: B ends: 120 -> 122.
TEST(MemoryTimeline, PeakAndCategoriesOfAKnownSchedule) {
  OpGraph g;
  g.initial_bytes[static_cast<int>(MemCategory::kParams)] = 100;
  g.slack = {0.1, 100};
  Op a{"A", Resource::kCompute, OpCategory::kCompute, 2, {{MemCategory::kActivations, 50}},
       {{MemCategory::kActivations, -50}, {MemCategory::kActivations, 20}}};
  Op b{"B", Resource::kComm, OpCategory::kZero, 3, {{MemCategory::kBuffers, 30}}, {{MemCategory::kBuffers, -30}}};
  g.add_op(a);
  g.add_op(b);
  const MemoryTimeline m = memory_timeline(g, schedule_ops(g, Mode::kOverlap));
  EXPECT_DOUBLE_EQ(m.peak_bytes, 188);
  EXPECT_DOUBLE_EQ(m.peak_time_s, 0);
  EXPECT_EQ(m.peak_op, 1);
  EXPECT_DOUBLE_EQ(m.peak_alive[static_cast<int>(MemCategory::kActivations)], 50);
  EXPECT_DOUBLE_EQ(m.peak_alive[static_cast<int>(MemCategory::kBuffers)], 30);
  EXPECT_DOUBLE_EQ(m.peak_alive[static_cast<int>(MemCategory::kOverhead)], 8);
  ASSERT_EQ(m.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(m.samples[1].time_s, 2);
  EXPECT_DOUBLE_EQ(m.samples[1].bytes, 155);
  EXPECT_DOUBLE_EQ(m.samples[2].bytes, 122);
}

// Two layers checkpointed (recompute = forward). Terms: persistent params 1000, checkpoint 10,
// layer saved 100, backward extra 50, Ulysses 7, loss forward peak 300 / saved 40 / backward
// peak 200, layer grads 20, reduce copy 5, optimizer transient 30. The moments:
//   fwd.L1 attention: 1000 + 10 + 100 + 7                 = 1117
//   loss forward:     1000 + 2*10 + 300                   = 1320  <- peak
//   loss backward:    1000 + 2*10 + 200                   = 1220
//   bwd.L1:           1000 + 20 + 100 + 50 + 20 + 5       = 1195  (its a2a copies are in the 50)
//   Adam:             1000 + 30                           = 1030
StepCosts checkpointed_costs() {
  StepCosts c = testing::two_layer_costs();
  c.recompute = c.forward;
  return c;
}

MemoryTerms checkpointed_terms() {
  MemoryTerms t;
  t.persistent[static_cast<int>(MemCategory::kParams)] = 1000;
  t.stored_bytes_per_layer = 10;
  t.layer_saved_bytes = 100;
  t.layer_backward_extra_bytes = 50;
  t.ulysses_buffer_bytes = 7;
  t.loss_forward_peak_bytes = 300;
  t.loss_saved_bytes = 40;
  t.loss_backward_peak_bytes = 200;
  t.layer_grad_transient_bytes = 20;
  t.reduce_copy_bytes = 5;
  t.optimizer_transient_bytes = 30;
  return t;
}

// No-overlap: loss.fwd starts at 1 + 12 + 12 = 25.
TEST(StepMemory, LossForwardPeak) {
  const SimResult r = simulate(checkpointed_costs(), checkpointed_terms(), Mode::kNoOverlap);
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, 1320);
  EXPECT_DOUBLE_EQ(r.peak_time_s, 25);
  EXPECT_EQ(r.peak_op, "m0.loss.fwd");
  EXPECT_DOUBLE_EQ(r.peak_alive.params_bytes, 1000);
  EXPECT_DOUBLE_EQ(r.peak_alive.activations_bytes, 20);
  EXPECT_DOUBLE_EQ(r.peak_alive.logits_bytes, 300);
  EXPECT_DOUBLE_EQ(r.memory.back().bytes, 1000);  // back to the persistent state
}

// With a smaller loss (forward peak 100, backward peak 150) the last layer's backward peaks when
// it starts: the loss ends at 25 + 3 + 5 = 33 and the recompute of L1 takes 12, so at 45.
// Alive: params 1000, activations 20 + 100 + 50, grads 20, buffers 5.
TEST(StepMemory, LastLayerBackwardPeak) {
  MemoryTerms t = checkpointed_terms();
  t.loss_forward_peak_bytes = 100;
  t.loss_backward_peak_bytes = 150;
  const SimResult r = simulate(checkpointed_costs(), t, Mode::kNoOverlap);
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes, 1195);
  EXPECT_DOUBLE_EQ(r.peak_time_s, 45);
  EXPECT_EQ(r.peak_op, "m0.bwd.L1.mlp");
  EXPECT_DOUBLE_EQ(r.peak_alive.activations_bytes, 170);
  EXPECT_DOUBLE_EQ(r.peak_alive.grads_bytes, 20);
  EXPECT_DOUBLE_EQ(r.peak_alive.buffers_bytes, 5);
  // Overlap changes no moment here: reduce.L1 (6 s) ends during L0's recompute (12 s).
  EXPECT_DOUBLE_EQ(simulate(checkpointed_costs(), t, Mode::kOverlap).peak_memory_bytes, 1195);
}

// Offloaded checkpoints: 5 layers, 3 kept on the device. Checkpoint 10 per layer, nothing else.
// Layer i's checkpoint leaves the device when layer i+3's forward ends (after its D2H copy), and
// comes back (H2D) one layer ahead of its backward; the last 3 never leave.
//   fwd.L4 runs with checkpoints 1, 2, 3 on the device (0 left at fwd.L3's end) = 30; the loss
//   with 2, 3, 4 = 30; bwd.L1 with 1 (back) + 0 (prefetched) = 20. Peak 30.
TEST(StepMemory, OffloadedCheckpointsKeepThreeOnDevice) {
  StepCosts c;
  c.layers = 5;
  c.forward.mlp_s = 1;
  c.recompute.mlp_s = 1;
  c.backward.mlp_s = 2;
  c.ckpt_d2h_s = 0.5;
  c.ckpt_h2d_s = 0.5;
  MemoryTerms t;
  t.stored_bytes_per_layer = 10;
  t.checkpoints_offloaded = true;
  for (Mode mode : {Mode::kNoOverlap, Mode::kOverlap}) {
    const SimResult r = simulate(c, t, mode);
    EXPECT_DOUBLE_EQ(r.peak_memory_bytes, 30);
    EXPECT_DOUBLE_EQ(r.peak_alive.activations_bytes, 30);
    EXPECT_NEAR(r.memory.back().bytes, 0, 1e-12);
  }
  // Overlap: each D2H (0.5 s) hides behind the next layer's forward (1 s), each H2D behind the
  // backward above it; kept checkpoints are not waited for. The compute stream never idles:
  // step = 5 * 1 + 5 * (1 + 2) = 20; serial adds 5 * 0.5 + 5 * 0.5 of copies = 25.
  const SimResult r = simulate(c, t, Mode::kOverlap);
  EXPECT_DOUBLE_EQ(r.step_time_s, 20);
  EXPECT_DOUBLE_EQ(r.serial_step_time_s, 25);
  EXPECT_DOUBLE_EQ(r.exposed_comm_s.offload_s, 0);
}

}  // namespace
}  // namespace spplan::sim
