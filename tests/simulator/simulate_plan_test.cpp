// The simulator against the analytical estimate, on plans built in code.
//  - No overlap: the step time is the estimate's serial time and the memory peak is the
//    costmodel's peak, both to 1e-9 relative (the same terms, added in another order).
//  - Overlap: never slower than serial, never faster than the critical path or the busiest
//    resource. Its memory peak may differ from the costmodel's by what overlap adds or moves:
//      + the prefetch window of the first backward layer's gather, which may run during the loss
//        (memory_phases() holds no window at the loss);
//      + a second reduce copy while a layer's reduction overlaps the next layer's backward;
//      - the window a gather has not yet started when a layer peaks.
//    So |overlap - costmodel| <= (window + reduce copy) * (1 + fragmentation).
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "simulator/memory_terms.hpp"
#include "simulator/simulate.hpp"
#include "simulator/step_graph.hpp"
#include "tests/simulator/plan_fixtures.hpp"

namespace spplan::sim {
namespace {

struct Case {
  const char* name;
  PlanSpec plan;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }  // not 400 bytes of hex

std::vector<Case> cases() {
  using testing::llama_70b;
  using testing::llama_8b;
  using testing::make_plan;
  std::vector<Case> out;
  out.push_back({"zero3_full_sp8", make_plan(llama_8b(), 8, 64 * 1024, 8)});
  Case alst{"zero3_alst_offload_tiled", make_plan(llama_8b(), 16, 512 * 1024, 8)};
  alst.plan.knobs.act_ckpt = ActCkpt::kOffload;
  alst.plan.knobs.offload_optimizer = OffloadDevice::kCpu;
  alst.plan.knobs.tiled_mlp = alst.plan.knobs.tiled_loss = true;
  out.push_back(alst);
  Case params{"zero3_param_offload", make_plan(llama_8b(), 8, 32 * 1024, 4)};
  params.plan.knobs.offload_params = OffloadDevice::kCpu;
  params.plan.knobs.offload_optimizer = OffloadDevice::kCpu;
  out.push_back(params);
  Case zero2{"zero2_no_ckpt", make_plan(llama_8b(), 8, 8 * 1024, 4)};
  zero2.plan.knobs.zero_stage = 2;
  zero2.plan.knobs.act_ckpt = ActCkpt::kNone;
  out.push_back(zero2);
  Case zero1{"zero1_accum2_fp32comm", make_plan(llama_8b(), 8, 16 * 1024, 8)};
  zero1.plan.knobs.zero_stage = 1;
  zero1.plan.knobs.grad_accum_steps = 2;
  zero1.plan.knobs.sp_comm_dtype = CommDtype::kFp32;
  out.push_back(zero1);
  Case single{"one_gpu_zero0", make_plan(llama_8b(), 1, 4 * 1024, 1)};
  single.plan.knobs.zero_stage = 0;
  out.push_back(single);
  Case big{"llama70b_1M_sp16_1024gpus", make_plan(llama_70b(), 1024, 1024 * 1024, 16)};
  big.plan.knobs.act_ckpt = ActCkpt::kOffload;
  big.plan.knobs.tiled_mlp = big.plan.knobs.tiled_loss = true;
  out.push_back(big);
  // Ring attention: Ulysses 8 in each node x ring 2 across (hops hidden), ring only over 16 GPUs
  // at a short sequence (hops outlast their blocks), and the all-gather variant.
  // Each on a trainer that runs it: spplan-engine for the hybrid, Accelerate (hf) for a ring alone.
  Case hybrid{"hybrid_sp8_cp2_1M", make_plan(llama_8b(), 16, 1024 * 1024, 8)};
  hybrid.plan.stack = trainer_stack("engine");
  hybrid.plan.knobs.cp = 2;
  hybrid.plan.knobs.tiled_mlp = hybrid.plan.knobs.tiled_loss = true;
  out.push_back(hybrid);
  Case ring{"ring_cp16_32k", make_plan(llama_8b(), 16, 32 * 1024, 1)};
  ring.plan.stack = trainer_stack("hf");
  ring.plan.knobs.cp = 16;
  settle_layout_attention(&ring.plan);  // torch's context parallel runs SDPA
  out.push_back(ring);
  // GLM-4.5-Air: a dense first layer before 45 mixture layers, each kind with its own saved
  // tensors, backward and gathered weights; kept whole without checkpointing, checkpointed at sp 8.
  Case glm{"glm_air_dense_first_layer_no_ckpt", make_plan(load_model("glm-4.5-air").value(), 8, 4 * 1024, 1)};
  glm.plan.knobs.act_ckpt = ActCkpt::kNone;
  out.push_back(glm);
  Case glm_sp{"glm_air_sp8_64k", make_plan(load_model("glm-4.5-air").value(), 8, 64 * 1024, 8)};
  glm_sp.plan.knobs.offload_optimizer = OffloadDevice::kCpu;
  out.push_back(glm_sp);
  Case gather{"allgather_cp4_256k", make_plan(llama_8b(), 8, 256 * 1024, 1)};
  gather.plan.stack = trainer_stack("hf");
  gather.plan.knobs.cp = 4;
  gather.plan.knobs.cp_comm = CpComm::kAllGather;
  settle_layout_attention(&gather.plan);
  out.push_back(gather);
  // More tiles and ring blocks a pass than the graph draws (step_graph_forward.cpp kMaxDrawnRuns):
  // 512 MLP tiles a pass at 16M tokens over sp 8, a ring of 128.
  Case tiles{"alst_16M_512_tiles_a_pass", make_plan(llama_8b(), 8, 16 * 1024 * 1024, 8)};
  tiles.plan.knobs = alst.plan.knobs;
  out.push_back(tiles);
  Case wide_ring{"ring_cp128_1M", make_plan(llama_8b(), 128, 1024 * 1024, 1)};
  wide_ring.plan.stack = trainer_stack("hf");
  wide_ring.plan.knobs.cp = 128;
  settle_layout_attention(&wide_ring.plan);
  out.push_back(wide_ring);
  // Long accumulations: simulated as three micro steps, the others folded (simulate.hpp).
  Case million{"zero1_accum_1000000", make_plan(llama_8b(), 8, 16 * 1024, 8)};
  million.plan.knobs.zero_stage = 1;
  million.plan.knobs.grad_accum_steps = 1'000'000;
  out.push_back(million);
  Case most{"zero3_alst_accum_1048576", alst.plan};
  most.plan.knobs.grad_accum_steps = 1 << 20;  // the largest a flag or a plan file accepts
  out.push_back(most);
  return out;
}

class SimulatePlan : public ::testing::TestWithParam<Case> {};

TEST_P(SimulatePlan, PlanIsValid) { EXPECT_TRUE(check_plan(GetParam().plan, flag_where).is_ok()); }

TEST_P(SimulatePlan, NoOverlapEqualsTheEstimatesSerialTime) {
  const PlanSpec& p = GetParam().plan;
  const SimResult r = simulate_plan(p, Mode::kNoOverlap);
  const double serial_s = costmodel::estimate(p).time.serial_step_time_s;
  EXPECT_NEAR(r.step_time_s, serial_s, 1e-9 * serial_s);
  EXPECT_NEAR(r.serial_step_time_s, costmodel::step_costs(p).serial_s(), 1e-9 * serial_s);
}

TEST_P(SimulatePlan, NoOverlapPeakEqualsTheCostmodelPeak) {
  const PlanSpec& p = GetParam().plan;
  const SimResult r = simulate_plan(p, Mode::kNoOverlap);
  const costmodel::MemoryBreakdown peak = costmodel::peak_memory(p);
  EXPECT_NEAR(r.peak_memory_bytes, peak.needed_bytes(), 1e-9 * peak.total_bytes())
      << "costmodel peak at " << peak.peak_phase << ", simulator at " << r.peak_op;
  EXPECT_NEAR(r.peak_alive.activations_bytes, peak.activations_bytes, 1e-9 * peak.total_bytes());
  EXPECT_NEAR(r.peak_alive.logits_bytes, peak.logits_bytes, 1e-9 * peak.total_bytes());
}

// A mixture's layers draw their MLP as experts, GLM-4.5's dense first layer as an MLP.
TEST(SimulateMixture, ItsLayersDrawTheirExperts) {
  const PlanSpec p = testing::make_plan(load_model("glm-4.5-air").value(), 8, 4 * 1024, 1);
  const SimResult r = simulate_plan(p, Mode::kNoOverlap);
  const auto named = [&](const std::string& name) {
    return std::any_of(r.events.begin(), r.events.end(), [&](const SimEvent& e) { return e.name == name; });
  };
  EXPECT_TRUE(named("m0.fwd.L0.mlp"));
  EXPECT_FALSE(named("m0.fwd.L0.experts"));
  EXPECT_TRUE(named("m0.fwd.L1.experts"));
  EXPECT_TRUE(named("m0.bwd.L45.experts"));
}

// GLM-4.5's dense first layer runs its own 10944-wide MLP, a mixture layer its experts: each is
// drawn at its own time, and the layers together take what the step's mean passes sum to.
TEST(SimulateMixture, EachKindOfLayerTakesItsOwnTime) {
  const PlanSpec p = testing::make_plan(load_model("glm-4.5-air").value(), 8, 4 * 1024, 1);
  const costmodel::StepCosts c = costmodel::step_costs(p);
  const SimResult r = simulate_plan(p, Mode::kNoOverlap);
  const auto duration = [&](const std::string& name) {
    for (const SimEvent& e : r.events) {
      if (e.name == name) return e.end_s - e.start_s;
    }
    return -1.0;
  };
  const double dense = c.dense_layer.forward.mlp_s, mixture = c.mixture_layer.forward.mlp_s;
  ASSERT_GT(dense, 0.0);
  EXPECT_GT(std::abs(dense - mixture), 0.01 * mixture);  // the kinds differ
  EXPECT_NEAR(duration("m0.fwd.L0.mlp"), dense, 1e-12);
  EXPECT_NEAR(duration("m0.fwd.L1.experts"), mixture, 1e-12);
  EXPECT_NEAR(duration("m0.bwd.L0.mlp"), c.dense_layer.backward.mlp_s, 1e-12);
  EXPECT_NEAR(duration("m0.rec.L45.experts"), c.mixture_layer.recompute.mlp_s, 1e-12);
  const double layers = static_cast<double>(p.model.num_hidden_layers);
  EXPECT_NEAR(dense + (layers - 1) * mixture, layers * c.forward.mlp_s, 1e-9 * layers * c.forward.mlp_s);
}

TEST_P(SimulatePlan, OverlapIsBoundedBySerialAndCriticalPath) {
  const PlanSpec& p = GetParam().plan;
  const SimResult r = simulate_plan(p, Mode::kOverlap);
  const double tol_s = 1e-12 * r.serial_step_time_s;
  EXPECT_LE(r.step_time_s, r.serial_step_time_s + tol_s);
  EXPECT_GE(r.step_time_s, r.critical_path_s - tol_s);
  EXPECT_GE(r.step_time_s, *std::max_element(r.resource_busy_s.begin(), r.resource_busy_s.end()) - tol_s);
  EXPECT_DOUBLE_EQ(simulated_step_time_s(p), r.step_time_s);
}

// Ulysses all-to-alls are never hidden, in the simulator as in the estimate.
TEST_P(SimulatePlan, AllToAllIsAlwaysExposed) {
  const PlanSpec& p = GetParam().plan;
  const SimResult r = simulate_plan(p, Mode::kOverlap);
  const double a2a_s = costmodel::estimate(p).time.exposed_a2a_s;
  EXPECT_NEAR(r.exposed_comm_s.a2a_s, a2a_s, 1e-9 * r.serial_step_time_s);
}

TEST_P(SimulatePlan, OverlapPeakWithinTheOverlapAllowance) {
  const PlanSpec& p = GetParam().plan;
  const MemoryTerms t = memory_terms(p);
  const double allowance = (t.prefetch_window_bytes + t.reduce_copy_bytes) * (1 + t.slack.fraction);
  const double peak = costmodel::peak_memory(p).needed_bytes();
  const SimResult r = simulate_plan(p, Mode::kOverlap);
  EXPECT_LE(r.peak_memory_bytes, peak + allowance + 1e-9 * peak);
  EXPECT_GE(r.peak_memory_bytes, peak - allowance - 1e-9 * peak);
}

// Ring hops beyond their attention block, the all-gathers and the last dK/dV hop are what the
// estimate exposes. The simulator waits for at least that; it may wait longer where a ZeRO-3
// gather holds the comm stream the hops share (the estimate prices them apart), never by more
// than all ZeRO traffic.
TEST_P(SimulatePlan, RingExposedAsTheEstimate) {
  const PlanSpec& p = GetParam().plan;
  const SimResult r = simulate_plan(p, Mode::kOverlap);
  const costmodel::Estimate e = costmodel::estimate(p);
  const double ring_s = e.time.exposed_cp_s;
  if (p.knobs.cp == 1) {
    EXPECT_EQ(r.exposed_comm_s.ring_s, 0.0);
  } else {
    EXPECT_GT(ring_s, 0.0);
    EXPECT_GE(r.exposed_comm_s.ring_s, ring_s * (1 - 1e-9));
    EXPECT_LE(r.exposed_comm_s.ring_s, ring_s + e.time.zero_comm_s);
  }
}

// Folding is exact where the steady micro step repeats: each plan at 6 micro steps, simulated
// whole and folded (three drawn, three counted), gives the same totals in both modes.
TEST_P(SimulatePlan, FoldedMicroStepsAddWhatSimulatingThemAdds) {
  PlanSpec p = costmodel::as_priced(GetParam().plan);
  p.knobs.grad_accum_steps = 6;
  const costmodel::StepCosts c = costmodel::step_costs(p);
  const MemoryTerms t = memory_terms(p);
  for (const Mode mode : {Mode::kNoOverlap, Mode::kOverlap}) {
    const SimResult whole = simulate_graph(build_step_graph(c, t), mode), folded = simulate(c, t, mode);
    ASSERT_EQ(folded.folded.count, 3);
    ASSERT_EQ(whole.folded.count, 0);
    const double tol_s = 1e-9 * whole.serial_step_time_s;
    EXPECT_NEAR(folded.step_time_s, whole.step_time_s, tol_s);
    EXPECT_NEAR(folded.serial_step_time_s, whole.serial_step_time_s, tol_s);
    EXPECT_NEAR(folded.critical_path_s, whole.critical_path_s, tol_s);
    EXPECT_NEAR(folded.exposed_comm_s.zero_s, whole.exposed_comm_s.zero_s, tol_s);
    EXPECT_NEAR(folded.exposed_comm_s.offload_s, whole.exposed_comm_s.offload_s, tol_s);
    EXPECT_NEAR(folded.exposed_comm_s.ring_s, whole.exposed_comm_s.ring_s, tol_s);
    EXPECT_NEAR(folded.peak_memory_bytes, whole.peak_memory_bytes, 1e-9 * whole.peak_memory_bytes);
  }
}

// A million micro steps draw three: the first, m1 and the last, each under its own name, and say
// which were folded.
TEST(SimulateFolded, AMillionMicroStepsDrawThree) {
  PlanSpec p = testing::make_plan(testing::llama_8b(), 8, 16 * 1024, 8);
  p.knobs.grad_accum_steps = 3;
  const size_t three = simulate_plan(p, Mode::kOverlap).events.size();
  p.knobs.grad_accum_steps = 1'000'000;
  const SimResult r = simulate_plan(p, Mode::kOverlap);
  EXPECT_EQ(r.events.size(), three);
  const auto named = [&](const std::string& prefix) {
    return std::any_of(r.events.begin(), r.events.end(), [&](const SimEvent& e) { return e.name.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(named("m0.") && named("m1.") && named("m999999."));
  EXPECT_FALSE(named("m2."));
  EXPECT_EQ(r.folded.count, 999'997);
  EXPECT_LT(r.shown_time_s, r.step_time_s / 1000);
  EXPECT_EQ(folded_text(r.folded).substr(0, 83),
            "micro steps m2..m999998 (999,997 of 1,000,000) are the same as m1: simulated once, ");
  EXPECT_EQ(folded_text(FoldedMicroSteps{}), "");
}

// Beyond 64 tiles a pass the graph draws runs of them: its size stops growing with the sequence.
TEST(SimulateBounded, OpsStopGrowingWithTheSequence) {
  PlanSpec p = testing::make_plan(testing::llama_8b(), 8, 16 * 1024 * 1024, 8);
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  const size_t at_16m = simulate_plan(p, Mode::kNoOverlap).num_ops;
  p.seq_len = int64_t{1} << 36;
  const SimResult longest = simulate_plan(p, Mode::kNoOverlap);
  EXPECT_EQ(longest.num_ops, at_16m);
  const double serial_s = costmodel::estimate(p).time.serial_step_time_s;
  EXPECT_NEAR(longest.step_time_s, serial_s, 1e-9 * serial_s);
}

INSTANTIATE_TEST_SUITE_P(Plans, SimulatePlan, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace spplan::sim
