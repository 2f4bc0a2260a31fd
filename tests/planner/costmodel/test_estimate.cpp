// planner/costmodel/estimate.cpp: what a plan does not fit in, the attention kernel's index range
// among the limits (software_facts.hpp kFlash2MaxTensorElements).
#include "planner/costmodel/estimate.hpp"

#include <gtest/gtest.h>

#include "tests/planner/costmodel/fixtures.hpp"

namespace spplan::costmodel {
namespace {

using testing::llama8b;

// ALST's one-H100 recipe: ZeRO-3 with both offloads, checkpoints offloaded, tiled MLP and loss.
PlanSpec alst_one_gpu(int64_t seq) {
  PlanSpec p = llama8b(1, 1, seq);
  p.knobs.zero_stage = 3;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  p.knobs.offload_params = OffloadDevice::kCpu;
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  return p;
}

// 2^31 / 4096 (Llama-3.1-8B's query width) = 524,288 tokens a GPU: the next 1K step is out of
// FlashAttention 2's reach whatever memory is free (ALST's recipe: 555K "an illegal memory access").
TEST(Estimate, Flash2StopsAtTwoToThe31ElementsPerGpu) {
  const Estimate at = estimate(alst_one_gpu(524288));
  EXPECT_TRUE(at.fits) << at.reason();
  EXPECT_DOUBLE_EQ(at.attention_tensor_elements, 2147483648.0);
  const Estimate past = estimate(alst_one_gpu(525312));
  EXPECT_FALSE(past.fits);
  EXPECT_EQ(past.limit, Estimate::Limit::kKernelIndexRange);
  EXPECT_LT(past.memory.total_bytes(), past.usable_bytes);  // memory would fit
  EXPECT_NEAR(past.over_limit(), 525312.0 / 524288.0, 1e-12);
  EXPECT_EQ(past.reason(),
            "FlashAttention 2 indexes in 32 bits: its q tensor holds 2.15e+09 elements per GPU, more than 2^31 (more "
            "sp or cp shortens it; flash3 and sdpa index in 64 bits)");
  // FlashAttention 3 and SDPA index in 64 bits; sp shortens the tensor (q after the all-to-all
  // holds every token of heads / sp: as many elements as before it).
  PlanSpec flash3 = alst_one_gpu(525312);
  flash3.stack.attention = AttentionKernel::kFlash3;
  EXPECT_TRUE(estimate(flash3).fits) << estimate(flash3).reason();
  PlanSpec sp8 = llama8b(8, 8, 8 * 525312);
  sp8.knobs.zero_stage = 3;
  sp8.knobs.offload_optimizer = OffloadDevice::kCpu;
  sp8.knobs.act_ckpt = ActCkpt::kOffload;
  sp8.knobs.tiled_mlp = sp8.knobs.tiled_loss = true;
  EXPECT_EQ(estimate(sp8).limit, Estimate::Limit::kKernelIndexRange);
  sp8.seq_len = 8 * 524288;
  EXPECT_NE(estimate(sp8).limit, Estimate::Limit::kKernelIndexRange);
}


// The fit verdict is on what the step needs: the engine (expandable segments) fits where its
// reported peak, with the whole slack allowance a run keeps when memory is plentiful, is above
// the device; the same plan on a stack without them does not. On one H200, qwen3-0.6b at 73,728
// tokens ran (validation/gpu/h200-141gb-2026-11-30/slack.jsonl: 138.65 GiB allocated, 138.79
// reserved) where the whole allowance put it at 145.9 GiB.
TEST(Estimate, AStackWithExpandableSegmentsFitsOnWhatItNeeds) {
  PlanSpec p;
  p.model = load_model("qwen3-0.6b").value();
  p.cluster.gpu = load_gpu("h200-141gb").value();
  p.cluster.num_gpus = 1;
  p.seq_len = 73728;
  p.knobs.sp = 1;
  p.knobs.precision = Precision::kBf16;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.zero_stage = 0;
  p.stack = load_trainer("engine").value();
  p.stack.attention = AttentionKernel::kSdpa;  // the engine's kernel without a layout ([layouts.none])
  const Estimate engine = estimate(p);
  EXPECT_TRUE(engine.fits) << engine.reason();
  EXPECT_GT(engine.memory.total_bytes(), engine.capacity_bytes);
  EXPECT_LE(engine.memory.needed_bytes(), engine.capacity_bytes);
  EXPECT_GT(engine.free_memory_pct(), 0.0);

  p.stack.expandable_segments = false;
  const Estimate whole = estimate(p);
  EXPECT_FALSE(whole.fits);
  EXPECT_NE(whole.reason().find("needs 145.9 GiB"), std::string::npos) << whole.reason();
  EXPECT_LT(whole.free_memory_pct(), 0.0);
}

}  // namespace
}  // namespace spplan::costmodel
