#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/costmodel/comm.hpp"
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/memory.hpp"
#include "planner/costmodel/step_costs.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

PlanSpec plan(int64_t gpus, int64_t sp, int64_t seq) {
  PlanSpec p = testing::llama8b(gpus, sp, seq);
  p.knobs.tiled_loss = true;
  return p;
}

// A mixture runs each of its E experts on its share of the k x s routed tokens, after the router's
// h x E GEMM over all of them; its FLOPs count the k experts a token runs through, not all E.
TEST(Compute, AMixtureRunsEachExpertOnItsShareOfTheTokens) {
  PlanSpec p = plan(8, 8, 131072);
  p.model = testing::qwen3_30b_a3b();
  const GpuSpec& g = p.cluster.gpu;
  const double s = 131072 / 8, per_expert = s * 8 / 128, a = 2;
  const double expected = 128 * (2 * gemm_time_s(g, per_expert, 768, 2048, a) + gemm_time_s(g, per_expert, 2048, 768, a)) +
                          gemm_time_s(g, s, 128, 2048, a);
  EXPECT_DOUBLE_EQ(step_costs(p).forward.mlp_s, expected);
  PlanSpec dense_twin = p;
  dense_twin.model.num_experts = dense_twin.model.experts_per_token = dense_twin.model.moe_intermediate_size = 0;
  dense_twin.model.intermediate_size = 8 * 768;
  const double router_flops = 2.0 * 2048 * 128 * 48 * 131072;  // per forward pass of the sequence
  const double passes = 4;  // forward, backward (2x), recompute: full checkpointing by default
  EXPECT_NEAR(estimate(p).model_flops_per_step - estimate(dense_twin).model_flops_per_step, passes * router_flops, 1e4);
}

// A sliding window of w keys: s w - w^2 / 2 (query, key) pairs once s > w, the causal s^2 / 2 up to
// it; the step prices the windowed attention (each query sees its last w keys).
TEST(Compute, ASlidingWindowAttendsToTheLastWKeys) {
  EXPECT_DOUBLE_EQ(causal_attention_fwd_flops(4096, 32, 128, 1, 4096), causal_attention_fwd_flops(4096, 32, 128, 1));
  EXPECT_DOUBLE_EQ(causal_attention_fwd_flops(65536, 32, 128, 1, 4096), 32 * 4.0 * 128 * (65536.0 * 4096 - 4096.0 * 4096 / 2));
  PlanSpec p = plan(8, 8, 65536);
  p.model = load_model("mistral-7b").value();
  const double full = step_costs(p).forward.attention_s;
  p.model.sliding_window = 4096;
  EXPECT_LT(step_costs(p).forward.attention_s, full / 5);  // 8.3x fewer pairs, and the kernel's fixed cost
}

// The engine runs a window in masked blocks (window_attention.hpp): block 0 causal over its w
// queries, each later block n (n + w - 1) pairs, one call a block; a kernel that skips what the
// window leaves out (FlashAttention) does s w - w^2 / 2 in one call.
TEST(Compute, MaskedWindowBlocksComputeTheirWholeBand) {
  TrainingStack masked, flash;
  masked.window_in_masked_blocks = true;
  const double w = 1024, s = 4 * 1024 + 256;  // 4 full blocks, the last of 256 rows
  EXPECT_DOUBLE_EQ(computed_window_pairs(flash, s, w), causal_pairs(s, w));
  EXPECT_DOUBLE_EQ(computed_window_pairs(masked, s, w), w * w / 2 + 3 * w * (2 * w - 1) + 256 * (256 + w - 1));
  EXPECT_EQ(window_attention_calls(masked, s, w), 5);
  EXPECT_EQ(window_attention_calls(flash, s, w), 1);
  EXPECT_DOUBLE_EQ(computed_window_pairs(masked, w, w), causal_pairs(w, w));  // inside the window: causal, one call
  EXPECT_EQ(window_attention_calls(masked, w, w), 1);
  // The engine's step: 64 calls of a block's pairs over the rank's 4 of 32 heads.
  PlanSpec p = plan(8, 8, 65536);
  p.model = load_model("mistral-7b").value();
  p.model.sliding_window = 1024;
  p.stack.window_in_masked_blocks = true;
  const LayerPassCosts fwd = step_costs(p).forward;
  EXPECT_EQ(fwd.attention_blocks, 64);
  const double pairs = computed_window_pairs(p.stack, 65536, 1024);
  EXPECT_NEAR(fwd.attention_s, 64 * attention_fwd_time_s(p.cluster.gpu, p.stack.attention,
                                                         attention_pairs_fwd_flops(pairs, 4, 128, 1) / 64, 2), 1e-12);
}

// A causal call computes the key tiles its diagonal crosses whole (GpuSpec::
// attention_causal_extra_keys a row, as `spplan calibrate` measures it against non-causal calls):
// every row of one causal call, twice past a window the kernel applies (its first tile is cut too),
// and in the engine's masked blocks the causal first block's rows only.
TEST(Compute, ACausalCallPaysItsDiagonalTilesAtTheNonCausalRate) {
  TrainingStack masked, flash;
  masked.window_in_masked_blocks = true;
  EXPECT_DOUBLE_EQ(diagonal_rows(flash, 8192, 0), 8192);
  EXPECT_DOUBLE_EQ(diagonal_rows(flash, 8192, 1024), 8192 + 7168);
  EXPECT_DOUBLE_EQ(diagonal_rows(flash, 1024, 1024), 1024);  // inside the window: causal
  EXPECT_DOUBLE_EQ(diagonal_rows(masked, 8192, 1024), 1024);
  EXPECT_DOUBLE_EQ(diagonal_rows(masked, 1000, 1024), 1000);
  EXPECT_DOUBLE_EQ(attention_cost_pairs({1e6, 1000, 0}, 256, 0.5), 1e6 + 256e3);
  EXPECT_DOUBLE_EQ(attention_cost_pairs({1e6, 1000, 4e5}, 256, 0.5), 1e6 + 256e3 + 2e5);
  // One causal call over 64K tokens for 4 of 32 heads: S (S / 2 + 256) pairs forward, 128 extra a row backward.
  PlanSpec p = plan(8, 8, 65536);
  const LayerPassCosts none = step_costs(p).forward;
  p.cluster.gpu.attention_causal_extra_keys = 256;
  p.cluster.gpu.attention_bwd_causal_extra_keys = 128;
  const StepCosts c = step_costs(p);
  const GpuSpec& g = p.cluster.gpu;
  const double S = 65536;
  EXPECT_NEAR(c.forward.attention_s,
              attention_fwd_time_s(g, p.stack.attention, attention_pairs_fwd_flops(S * S / 2 + S * 256, 4, 128, 1), 2), 1e-12);
  EXPECT_NEAR(c.backward.attention_s,
              attention_bwd_time_s(g, p.stack.attention, attention_pairs_fwd_flops(S * S / 2 + S * 128, 4, 128, 1), 2), 1e-12);
  EXPECT_GT(c.forward.attention_s, none.attention_s);
}

// The engine's masked window blocks run under an additive bias (all but the causal first block):
// each of their pairs costs GpuSpec::attention_bias_extra_pairs more, as `spplan calibrate`
// measures a biased call against an unmasked one; a kernel that windows by itself takes no bias.
TEST(Compute, MaskedWindowBlocksPayTheirBiasOnEveryPairButTheFirstBlocks) {
  TrainingStack masked, flash;
  masked.window_in_masked_blocks = true;
  const double w = 1024, s = 4 * 1024 + 256;
  EXPECT_DOUBLE_EQ(biased_pairs(masked, s, w), computed_window_pairs(masked, s, w) - w * w / 2);
  EXPECT_DOUBLE_EQ(biased_pairs(flash, s, w), 0);
  EXPECT_DOUBLE_EQ(biased_pairs(masked, w, w), 0);  // one causal call
  PlanSpec p = plan(8, 8, 65536);
  p.model = load_model("mistral-7b").value();
  p.model.sliding_window = 1024;
  p.stack.window_in_masked_blocks = true;
  p.cluster.gpu.attention_bias_extra_pairs = 0.2;
  const GpuSpec& g = p.cluster.gpu;
  const double pairs = computed_window_pairs(p.stack, 65536, 1024), biased = pairs - 1024.0 * 1024 / 2;
  EXPECT_NEAR(step_costs(p).forward.attention_s,
              64 * attention_fwd_time_s(g, p.stack.attention, attention_pairs_fwd_flops(pairs + 0.2 * biased, 4, 128, 1) / 64, 2),
              1e-12);
}

// A model of windowed and full layers (Gemma 3: 29 windowed, 5 full) prices each layer's attention
// as the layers' average, a step's as that times the layer count.
TEST(Compute, WindowedAndFullLayersAverageTheirAttention) {
  ModelSpec m = load_model("llama-3.1-8b").value();
  m.sliding_window = 4096;
  m.full_attention_layers = 8;  // of 32
  const double windowed = causal_attention_fwd_flops(65536, 32, 128, 1, 4096);
  const double full = causal_attention_fwd_flops(65536, 32, 128, 1);
  EXPECT_DOUBLE_EQ(layer_attention_fwd_flops(m, 65536, 32, 1), (24 * windowed + 8 * full) / 32);
  m.full_attention_layers = 0;
  EXPECT_DOUBLE_EQ(layer_attention_fwd_flops(m, 65536, 32, 1), windowed);
  m.sliding_window = 0;
  EXPECT_DOUBLE_EQ(layer_attention_fwd_flops(m, 65536, 32, 1), full);
}

TEST(Comm, AllToAllWorkedByHand) {
  ClusterSpec c;
  c.gpu = *load_gpu("h100-80gb");
  c.num_gpus = 8;
  // 8 ranks in one node: 7/8 of 1 GB leaves each GPU at 450 GB/s * 0.8 = 360 GB/s,
  // plus one 20 us latency: 0.875e9 / 360e9 + 2e-5 = 0.00245056 s.
  EXPECT_NEAR(collective_time_s(c, Collective::kAllToAll, 1e9, 8), 0.875e9 / 360e9 + 2e-5, 1e-12);
  EXPECT_DOUBLE_EQ(collective_time_s(c, Collective::kAllToAll, 1e9, 1), 0.0);
  // 16 ranks on two nodes of 8: 7 peers over NVLink (7/16 GB at 360 GB/s) and, in parallel, 8 over
  // the 50 GB/s NIC at 80% (8/16 GB at 40 GB/s): the NIC side takes 12.5 ms.
  EXPECT_NEAR(collective_time_s(c, Collective::kAllToAll, 1e9, 16), 1e9 * 8 / 16 / 40e9 + 2e-5, 1e-12);
  // All-reduce moves twice the data of a reduce-scatter.
  const double rs = collective_time_s(c, Collective::kReduceScatter, 1e9, 8) - 7 * 2e-5;
  const double ar = collective_time_s(c, Collective::kAllReduce, 1e9, 8) - 7 * 2e-5;
  EXPECT_NEAR(ar, 2 * rs, 1e-12);
}

TEST(Compute, GemmIsComputeBoundWhenLargeAndMemoryBoundWhenThin) {
  const GpuSpec g = *load_gpu("h100-80gb");
  // 8192^3 GEMM: 2*8192^3 FLOPs at 989.4e12 * 0.70.
  EXPECT_NEAR(gemm_time_s(g, 8192, 8192, 8192, 2), 2.0 * 8192 * 8192 * 8192 / (989.4e12 * 0.70) + 5e-6, 1e-12);
  // A matrix-vector product is bound by reading the matrix: 2 * 8192^2 B at 3350 GB/s.
  EXPECT_GT(gemm_time_s(g, 1, 8192, 8192, 2), 2.0 * 8192 * 8192 / 3350e9);
}

// fp32 operands run at fp32_tflops times their own efficiency when the spec has one (a calibrated
// file), else at the bf16 fraction (the presets); bf16 operands never read the fp32 keys.
TEST(Compute, Fp32RatesHaveTheirOwnEfficiency) {
  GpuSpec g = *load_gpu("h100-80gb");  // fp32_tflops 67, matmul_efficiency 0.70, no fp32 keys
  const double flops = 2.0 * 8192 * 8192 * 8192;
  EXPECT_NEAR(gemm_time_s(g, 8192, 8192, 8192, 4), flops / (67e12 * 0.70) + 5e-6, 1e-12);
  const double attn = causal_attention_fwd_flops(8192, 32, 128, 1);
  const double bf16_attn = attention_fwd_time_s(g, AttentionKernel::kFlash2, attn, 2);
  const double fp32_attn = attention_fwd_time_s(g, AttentionKernel::kFlash2, attn, 4);
  EXPECT_NEAR(fp32_attn, attn / (67e12 * g.attention_efficiency) + g.attention_fixed_s, 1e-12);
  g.fp32_matmul_efficiency = 0.5;
  g.fp32_attention_efficiency = 0.25;
  g.fp32_attention_bwd_efficiency = 0.2;
  EXPECT_NEAR(gemm_time_s(g, 8192, 8192, 8192, 4), flops / (67e12 * 0.5) + 5e-6, 1e-12);
  EXPECT_NEAR(gemm_time_s(g, 8192, 8192, 8192, 2), flops / (989.4e12 * 0.70) + 5e-6, 1e-12);
  EXPECT_NEAR(attention_fwd_time_s(g, AttentionKernel::kSdpa, attn, 4),
              attn / (67e12 * 0.25) + g.sdpa_attention_fixed_s, 1e-12);
  EXPECT_NEAR(attention_bwd_time_s(g, AttentionKernel::kFlash2, attn, 4),
              2.5 * attn / (67e12 * 0.2) + g.attention_bwd_fixed_s, 1e-12);
  EXPECT_DOUBLE_EQ(attention_fwd_time_s(g, AttentionKernel::kFlash2, attn, 2), bf16_attn);
}

// A GEMM's backward is its two products (input and weight gradients) at the dtype's backward
// fraction when the spec has one (a CPU calibration writes it), else at its forward's.
TEST(Compute, GemmBackwardRunsAtItsOwnRateWhenMeasured) {
  GpuSpec g = *load_gpu("h100-80gb");  // no backward keys
  const double flops = 2.0 * 8192 * 8192 * 8192;
  EXPECT_NEAR(gemm_bwd_time_s(g, 8192, 8192, 8192, 2), 2 * (flops / (989.4e12 * 0.70) + 5e-6), 1e-12);
  g.matmul_bwd_efficiency = 0.07;  // bf16 only: fp32 keeps its forward fraction
  g.fp32_matmul_efficiency = 0.5;
  EXPECT_NEAR(gemm_bwd_time_s(g, 8192, 8192, 8192, 2), 2 * (flops / (989.4e12 * 0.07) + 5e-6), 1e-12);
  EXPECT_NEAR(gemm_bwd_time_s(g, 8192, 8192, 8192, 4), 2 * (flops / (67e12 * 0.5) + 5e-6), 1e-12);
  g.fp32_matmul_bwd_efficiency = 0.25;
  EXPECT_NEAR(gemm_bwd_time_s(g, 8192, 8192, 8192, 4), 2 * (flops / (67e12 * 0.25) + 5e-6), 1e-12);
  EXPECT_NEAR(gemm_time_s(g, 8192, 8192, 8192, 4), flops / (67e12 * 0.5) + 5e-6, 1e-12);  // forward unchanged
}

// Memory-bound kernels on fp32 tensors take fp32_elementwise_efficiency when given (a CPU converts
// every bf16 element), else elementwise_efficiency: 1 GB at 3350 GB/s x 0.8, or x 0.4.
TEST(Compute, ElementwiseRateFollowsTheDtype) {
  GpuSpec g = *load_gpu("h100-80gb");
  g.elementwise_efficiency = 0.8;
  EXPECT_NEAR(elementwise_time_s(g, 1e9, 4, 0), 1e9 / (3350e9 * 0.8), 1e-15);
  g.fp32_elementwise_efficiency = 0.4;
  EXPECT_NEAR(elementwise_time_s(g, 1e9, 4, 0), 1e9 / (3350e9 * 0.4), 1e-15);
  EXPECT_NEAR(elementwise_time_s(g, 1e9, 2, 2), 1e9 / (3350e9 * 0.8) + 2 * g.kernel_launch_s, 1e-15);
}

TEST(Compute, CausalAttentionFlopsAreHalfTheSquare) {
  // 2 matmuls * 2*s*s*d per head, halved: 2 * s^2 * d * heads.
  EXPECT_DOUBLE_EQ(causal_attention_fwd_flops(1000, 4, 128, 1), 2.0 * 1000 * 1000 * 128 * 4);
}

TEST(Estimate, SerialIsTheSumAndOverlapNeverSlower) {
  const PlanSpec p = plan(8, 8, 262144);
  const StepCosts c = step_costs(p);
  const Estimate e = estimate(p);
  EXPECT_DOUBLE_EQ(e.time.serial_step_time_s, c.serial_s());
  EXPECT_LE(e.time.step_time_s, e.time.serial_step_time_s);
  EXPECT_GE(e.time.step_time_s, e.time.compute_s);
  EXPECT_NEAR(e.tokens_per_s, 262144.0 / e.time.step_time_s, 1e-9);
}

TEST(Estimate, NoAllToAllWithoutSp) {
  EXPECT_DOUBLE_EQ(estimate(plan(8, 1, 32768)).time.a2a_s, 0.0);
  EXPECT_GT(estimate(plan(8, 8, 32768)).time.a2a_s, 0.0);
}

TEST(Estimate, TokensPerStepCountDataParallelGroups) {
  // 8 GPUs, sp 2 -> dp 4 sequences per step.
  EXPECT_DOUBLE_EQ(estimate(plan(8, 2, 65536)).tokens_per_step, 4.0 * 65536);
}

TEST(Estimate, DoesNotFitWhenTheSequenceIsFarTooLong) {
  const Estimate e = estimate(plan(1, 1, 4 << 20));
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.reason().rfind("GPU memory: needs ", 0), 0u) << e.reason();
}

TEST(Estimate, NvmeParameterOffloadReadsTheDrivesAndKeepsOnlyASwapBufferInHostMemory) {
  PlanSpec p = plan(8, 8, 131072);
  p.knobs.offload_params = OffloadDevice::kCpu;
  const StepCosts cpu = step_costs(p);
  const double host_cpu = host_memory(p).params_bytes;
  p.knobs.offload_params = OffloadDevice::kNvme;
  const StepCosts nvme = step_costs(p);
  // One layer's partition (2 B * 218,112,000 / 8) read by 8 ranks from 25 GB/s of NVMe.
  EXPECT_NEAR(nvme.param_fetch_h2d_s - cpu.param_fetch_h2d_s, 2.0 * 218112000 / 8 * 8 / 25e9, 1e-12);
  EXPECT_DOUBLE_EQ(host_memory(p).params_bytes, 2.0 * 5e8 * 8);  // pinned swap buffers, not the weights
  EXPECT_GT(host_cpu, host_memory(p).params_bytes);
}

// DeepSpeed reduces ZeRO 0/1 gradients once per optimizer step; ZeRO 2/3 in every micro step.
TEST(Estimate, GradientReductionsPerStepFollowTheZeroStage) {
  for (const int64_t zero : {0, 1, 2}) {
    PlanSpec one = plan(8, 1, 8192), four = one;
    one.knobs.zero_stage = four.knobs.zero_stage = zero;
    four.knobs.grad_accum_steps = 4;
    const StepCosts c1 = step_costs(one), c4 = step_costs(four);
    const double reductions = c4.step_zero_comm_s() / c1.step_zero_comm_s();
    EXPECT_NEAR(reductions, zero >= 2 ? 4.0 : 1.0, 1e-9) << "zero " << zero;
    EXPECT_NEAR(estimate(four).time.zero_comm_s, c4.step_zero_comm_s(), 1e-12);
  }
}

// DeepSpeed's TiledMLP cuts each sequence into ceil(s / h) shards and runs all micro-batch rows
// of a shard together: the shard count does not grow with the micro batch.
TEST(StepCosts, TiledMlpShardsFollowTheSequenceNotTheMicroBatch) {
  PlanSpec p = plan(8, 8, 8 * 32768);  // 32768 tokens per rank, h 4096: 8 shards
  p.knobs.tiled_mlp = true;
  EXPECT_EQ(step_costs(p).forward.mlp_tiles, 8);
  p.knobs.micro_batch = 2;
  EXPECT_EQ(step_costs(p).forward.mlp_tiles, 8);
}

TEST(Estimate, PriceFollowsThroughput) {
  const PlanSpec p = plan(8, 8, 131072);
  const Estimate e = estimate(p);
  EXPECT_NEAR(e.usd_per_million_tokens, 8 * 3.00 / 3600.0 / e.tokens_per_s * 1e6, 1e-9);
}

}  // namespace
}  // namespace spplan::costmodel

namespace spplan::costmodel {
namespace {

// Each kernel and direction pays its own fixed cost per call (a ring pays it once per block): the
// H100's are the 4K-token calls of gpu_h100_kernels.jsonl less their FLOPs at the preset's rates.
TEST(Compute, AttentionCallsPayTheirKernelsAndDirectionsFixedCost) {
  const GpuSpec g = *load_gpu("h100-80gb");
  const double attn = causal_attention_fwd_flops(4096, 16, 128, 1);
  EXPECT_NEAR(attention_fwd_time_s(g, AttentionKernel::kFlash2, attn, 2), 323e-6, 3e-6);  // measured 322.99 us
  EXPECT_NEAR(attention_bwd_time_s(g, AttentionKernel::kFlash2, attn, 2), 871e-6, 3e-6);  // 870.74
  EXPECT_NEAR(attention_fwd_time_s(g, AttentionKernel::kSdpa, attn, 2), 150e-6, 3e-6);    // 149.91
  EXPECT_NEAR(attention_bwd_time_s(g, AttentionKernel::kSdpa, attn, 2), 547e-6, 3e-6);    // 546.74
  // A GPU without the measurement: the launch cost for every call.
  const GpuSpec a100 = *load_gpu("a100-80gb");
  EXPECT_EQ(a100.attention_bwd_fixed_s, a100.attention_fixed_s);
  EXPECT_EQ(a100.sdpa_attention_bwd_fixed_s, a100.attention_fixed_s);
}

}  // namespace
}  // namespace spplan::costmodel
