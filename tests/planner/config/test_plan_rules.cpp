#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"

#include <gtest/gtest.h>

namespace spplan {
namespace {

ModelSpec heads(int64_t nh, int64_t nkv) {
  ModelSpec m;
  m.name = "m";
  m.num_attention_heads = nh;
  m.num_key_value_heads = nkv;
  return m;
}

TEST(ValidSp, DividesHeadsAndGpusWithKvReplication) {
  // 32 heads, 8 kv heads, 16 GPUs: sp must divide 16 and 32; 16 > 8 kv heads is fine (16 % 8 == 0).
  EXPECT_EQ(valid_sp_degrees(heads(32, 8), 16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  // 12 heads, 4 kv heads, 12 GPUs: 3 divides 12 but neither divides nor is divided by 4 kv heads.
  EXPECT_EQ(valid_sp_degrees(heads(12, 4), 12), (std::vector<int64_t>{1, 2, 4, 12}));
}

TEST(CheckPlan, RejectsInvalidCombinationsWithFlagNames) {
  PlanSpec p;
  p.model = heads(32, 8);
  p.model.name = "m";
  p.cluster.num_gpus = 8;
  p.seq_len = 1024;
  p.knobs.sp = 8;
  p.knobs.zero_stage = 2;
  p.knobs.offload_params = OffloadDevice::kCpu;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--offload-params: value \"cpu\" needs ZeRO stage 3, found stage 2 (allowed with this stage: none)");
  p.knobs.offload_params = OffloadDevice::kNone;
  p.knobs.zero_stage = 0;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--offload-optimizer: value \"cpu\" needs ZeRO stage 1, 2 or 3, found stage 0 (allowed with this stage: none)");
  p.knobs.offload_optimizer = OffloadDevice::kNone;
  p.knobs.sp = 16;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--sp: value 16 is not valid for m (32 heads, 8 kv heads) on 8 GPUs (allowed sp: 1, 2, 4, 8)");
  p.knobs.sp = 4;
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
  p.cluster.gpu.name = "g";
  p.cluster.gpu.nvme_GBps_per_node = 0;
  p.knobs.zero_stage = 3;
  p.knobs.offload_params = OffloadDevice::kNvme;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--offload-params: value \"nvme\" needs NVMe drives, but g has nvme_GBps_per_node 0 (allowed here: none, cpu)");
}

// What `spplan run` refuses is a plan rule of trainer "engine", so `plan --trainer engine` never
// ranks a plan the engine will not run (before the rule, 144 of 936 plans were ZeRO-3 without
// checkpointing, 288 used NVMe). Other trainers run all three.
TEST(CheckPlan, TrainerEngineRefusesWhatSpplanRunRefuses) {
  PlanSpec p;
  p.model = heads(32, 8);
  p.cluster.num_gpus = 2;
  p.cluster.gpu.nvme_GBps_per_node = 10;
  p.seq_len = 1024;
  p.knobs.sp = 2;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kNone;
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
  p.stack = trainer_stack("engine");
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--act-ckpt: value \"none\" with zero_stage 3 is not run by trainer \"engine\" (its ZeRO-3 gathers each "
            "layer inside the checkpointed layer's function; without checkpointing every gathered layer would stay "
            "alive until its backward (model.cpp); allowed: full, offload)");
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.offload_optimizer = OffloadDevice::kNvme;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--offload-optimizer: value \"nvme\" is not run by trainer \"engine\" (spplan run offloads to host RAM "
            "only (engine/parallel/offload.hpp); allowed: none, cpu)");
  p.knobs.offload_optimizer = OffloadDevice::kNone;
  p.knobs.offload_params = OffloadDevice::kCpu;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--offload-optimizer: value \"none\" with offload_params \"cpu\" is not run by trainer \"engine\" (with "
            "the parameter shards on the host its AdamW steps there too: the optimizer offloaded with them "
            "(train_optimizer.cpp); allowed: cpu)");
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
}

// A count above one node is whole nodes: 8 GPUs of 3 per node would be priced as 3 nodes and
// launched as 3 x 2 or 2 x 4 (12 GPUs at 8 a node were once exported as 2 x 6).
TEST(CheckPlan, GpuCountAboveOneNodeIsWholeNodes) {
  PlanSpec p;
  p.model = heads(32, 8);
  p.seq_len = 1024;
  p.cluster.gpu.gpus_per_node = 3;
  p.cluster.num_gpus = 8;
  p.knobs.sp = 2;
  EXPECT_EQ(check_plan(p, flag_where).message(),
            "--gpus: value 8 is not a whole number of nodes of 3 GPUs (allowed: 1 to 3, or a multiple of 3; the node "
            "size is gpus_per_node)");
  p.cluster.num_gpus = 6;
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
  p.cluster.num_gpus = 2;  // part of one node
  EXPECT_TRUE(check_plan(p, flag_where).is_ok());
}

// FlashAttention 2 has no fp32 kernels: an fp32 plan runs SDPA unless flash2 is named, which is refused.
TEST(CheckPlan, Fp32RunsSdpaAndRefusesFlash2) {
  PlanSpec p;
  p.knobs.precision = Precision::kFp32;
  EXPECT_EQ(p.stack.attention, AttentionKernel::kFlash2);
  EXPECT_EQ(check_attention_precision(p, flag_where).message(),
            "--attention: value \"flash2\" has no fp32 kernels (FlashAttention runs fp16 and bf16 only; allowed "
            "with precision fp32: sdpa, flex)");
  settle_layout_attention(&p);  // the layout's kernel, SDPA in fp32
  EXPECT_EQ(p.stack.attention, AttentionKernel::kSdpa);
  EXPECT_TRUE(check_attention_precision(p, flag_where).is_ok());
}

}  // namespace
}  // namespace spplan
