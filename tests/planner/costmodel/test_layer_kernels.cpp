#include "planner/costmodel/layer_kernels.hpp"

#include <gtest/gtest.h>

#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/step_costs.hpp"
#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

// Llama-3.1-8B: h 4096, q 4096, kv 1024 (q + k = 5120), i 14336, no q/k norms, vocab 128256.
TEST(LayerKernels, EagerLayerForwardWorkedByHand) {
  const PlanSpec p = testing::llama8b(8, 8, 65536);
  // bf16, per token: two RMSNorms at 36 B/element (to fp32 6, pow 8, mean 4, * rsqrt 8, to bf16 6,
  // * weight 4) over h; RoPE 20 B/element over q + k; SwiGLU 10 B/element over i; two residual
  // adds of 6 B/element over h.
  const KernelTraffic t = layer_elementwise_fwd(p);
  EXPECT_DOUBLE_EQ(t.bytes_per_token, 2 * 36.0 * 4096 + 20.0 * 5120 + 10.0 * 14336 + 2 * 6.0 * 4096);
  EXPECT_DOUBLE_EQ(t.kernels, 2 * 6 + 2 * 5 + 2 + 2);
}

TEST(LayerKernels, EagerBackwardMovesMoreThanTheForward) {
  const PlanSpec p = testing::llama8b(8, 8, 65536);
  // RMSNorm backward 76 B/element (bf16), RoPE 20, SwiGLU 18, residual adds 6.
  const KernelTraffic t = layer_elementwise_bwd(p);
  EXPECT_DOUBLE_EQ(t.bytes_per_token, 2 * 76.0 * 4096 + 20.0 * 5120 + 18.0 * 14336 + 2 * 6.0 * 4096);
  EXPECT_GT(t.bytes_per_token, layer_elementwise_fwd(p).bytes_per_token);
}

TEST(LayerKernels, Fp32HasNoCastsAndQwen3NormsQAndK) {
  PlanSpec p = testing::llama8b(8, 8, 65536);
  p.knobs.precision = Precision::kFp32;
  // fp32 RMSNorm forward: pow 8, mean 4, * rsqrt 8, * weight 8; no casts.
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(p).bytes_per_token,
                   2 * 28.0 * 4096 + 40.0 * 5120 + 20.0 * 14336 + 2 * 12.0 * 4096);
  PlanSpec q = testing::llama8b(8, 8, 65536);
  q.model.qk_norm = true;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(q).bytes_per_token - layer_elementwise_fwd(testing::llama8b(8, 8, 65536)).bytes_per_token,
                   36.0 * 5120);
}

TEST(LayerKernels, LigerFusesEachOpIntoOneKernelPerPass) {
  PlanSpec eager = testing::llama8b(8, 8, 65536);
  PlanSpec liger = eager;
  liger.stack = trainer_stack("liger");
  // Fused: RMSNorm 2a, RoPE 2a, SwiGLU 3a per element; the residual adds stay eager.
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(liger).bytes_per_token, 2 * 4.0 * 4096 + 4.0 * 5120 + 6.0 * 14336 + 2 * 6.0 * 4096);
  EXPECT_LT(layer_elementwise_bwd(liger).kernels, layer_elementwise_bwd(eager).kernels / 4);
  EXPECT_LT(step_costs(liger).forward.norm_s, step_costs(eager).forward.norm_s / 2);
}

// The engine's --tiled-loss brings its fused CUDA layer kernels (engine/model/model.cpp): priced as
// Liger's, and as the eager chain without the tiled loss (an H100, 2026-11-26: priced eager, the
// tiled-loss step read +42.7 %).
TEST(LayerKernels, TheEnginesTiledLossBringsItsFusedLayerKernels) {
  PlanSpec liger = testing::llama8b(8, 8, 65536);
  liger.stack = trainer_stack("liger");
  PlanSpec engine = liger;
  engine.stack = trainer_stack("engine");
  const PlanSpec eager = testing::llama8b(8, 8, 65536);
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(engine).bytes_per_token, layer_elementwise_fwd(eager).bytes_per_token);
  engine.knobs.tiled_loss = true;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(engine).bytes_per_token, layer_elementwise_fwd(liger).bytes_per_token);
  EXPECT_DOUBLE_EQ(layer_elementwise_bwd(engine).kernels, layer_elementwise_bwd(liger).kernels);
  PlanSpec hf = eager;
  hf.knobs.tiled_loss = true;  // another stack's tiled loss alone fuses nothing in the layers
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(hf).bytes_per_token, layer_elementwise_fwd(eager).bytes_per_token);
}

// The engine's fp32 layers normalise with LibTorch's rms_norm, one fused kernel a pass on a GPU
// (aten::_fused_rms_norm); RoPE and SwiGLU stay eager, and bf16 keeps Hugging Face's eager norm.
TEST(LayerKernels, TheEnginesFp32NormsAreOneKernelAPass) {
  PlanSpec eager = testing::llama8b(8, 8, 65536);
  eager.knobs.precision = Precision::kFp32;
  PlanSpec engine = eager;
  engine.stack = trainer_stack("engine");
  // fp32 (a = 4): fused RMSNorm 2a over h twice; eager RoPE 40 B over q + k, SwiGLU 20 B over i,
  // residual adds 12 B over h twice (as Fp32HasNoCastsAndQwen3NormsQAndK counts them).
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(engine).bytes_per_token,
                   2 * 8.0 * 4096 + 40.0 * 5120 + 20.0 * 14336 + 2 * 12.0 * 4096);
  EXPECT_LT(layer_elementwise_bwd(engine).kernels, layer_elementwise_bwd(eager).kernels);
  PlanSpec bf16 = engine;
  bf16.knobs.precision = Precision::kBf16;
  PlanSpec eager_bf16 = eager;
  eager_bf16.knobs.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(bf16).bytes_per_token, layer_elementwise_fwd(eager_bf16).bytes_per_token);
}

TEST(LayerKernels, UnfusedLossPassesOverTheVocabulary) {
  const PlanSpec p = testing::llama8b(8, 8, 65536);
  // Forward: upcast 6 + log_softmax 16 B per logit; backward: nll 4 + log_softmax 16 + cast 6.
  EXPECT_DOUBLE_EQ(unfused_loss_fwd(p).bytes_per_token, 22.0 * 128256);
  EXPECT_DOUBLE_EQ(unfused_loss_bwd(p).bytes_per_token, 26.0 * 128256);
}

TEST(Attention, SdpaRunsAtItsOwnRatesOnTheSameGpu) {
  const PlanSpec p = testing::llama8b(8, 8, 65536);
  const GpuSpec& g = p.cluster.gpu;  // h100-80gb: SDPA (cuDNN) 0.63 / 0.56, FlashAttention 2 0.34 / 0.32
  const double flops = 1e15;
  EXPECT_NEAR(attention_fwd_time_s(g, AttentionKernel::kSdpa, flops, 2), flops / (989.4e12 * 0.63) + g.sdpa_attention_fixed_s, 1e-12);
  EXPECT_NEAR(attention_bwd_time_s(g, AttentionKernel::kFlash2, flops, 2), 2.5 * flops / (989.4e12 * 0.32) + g.attention_bwd_fixed_s,
              1e-12);
  PlanSpec sdpa = p;
  sdpa.stack.attention = AttentionKernel::kSdpa;
  EXPECT_LT(step_costs(sdpa).backward.attention_s, step_costs(p).backward.attention_s);
}

TEST(Loss, FusedLossPricesEachChunkReadingTheWholeHead) {
  PlanSpec p = testing::llama8b(1, 1, 16384);
  p.knobs.tiled_loss = true;
  // Chunk: next_pow2(ceil(16384 / ceil(128256 / 4096) = 32)) = 512 tokens, 32 chunks; each chunk's
  // three GEMMs read the 128256 x 4096 head: priced per chunk, never less than one whole GEMM.
  const StepCosts c = step_costs(p);
  EXPECT_EQ(c.loss_tiles, 32);
  const GpuSpec& g = p.cluster.gpu;
  EXPECT_GT(c.loss_fwd_s, 3 * gemm_time_s(g, 16384, 128256, 4096, 2));
}

// A mixture's routing traffic follows its router: gpt-oss's softmax reads and writes its k chosen
// logits in bf16 (2 x 2 k bytes a token), a softmax over all E in fp32 2 x 4 E; GLM-4.5's fp32 router
// casts the MLP input (6 bytes an element in bf16, none in fp32); partial RoPE rotates its share.
TEST(LayerKernels, RoutingAndRopeTrafficFollowTheModel) {
  PlanSpec p = testing::llama8b(8, 1, 16384);
  p.model = testing::qwen3_30b_a3b();
  PlanSpec after_topk = p;
  after_topk.model.router_softmax_after_topk = true;
  const double k = 8, experts = 128;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(p).bytes_per_token - layer_elementwise_fwd(after_topk).bytes_per_token,
                   2 * 4 * experts - 2 * 2 * k);
  PlanSpec glm = p;
  glm.model.router_sigmoid = true;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(glm).bytes_per_token - layer_elementwise_fwd(p).bytes_per_token, 6.0 * 2048);
  glm.knobs.precision = Precision::kFp32;
  PlanSpec fp32 = p;
  fp32.knobs.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(glm).bytes_per_token, layer_elementwise_fwd(fp32).bytes_per_token);
  PlanSpec half = p;
  half.model.partial_rotary_factor = 0.5;
  const double qk = 32 * 128 + 4 * 128;
  EXPECT_DOUBLE_EQ(layer_elementwise_fwd(p).bytes_per_token - layer_elementwise_fwd(half).bytes_per_token, 20.0 * qk / 2);
}

}  // namespace
}  // namespace spplan::costmodel
