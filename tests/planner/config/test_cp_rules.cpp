// The ring degree's rules: table of bad plans with the exact message each gets.
#include <gtest/gtest.h>

#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"

namespace spplan {
namespace {

PlanSpec plan(int64_t gpus, int64_t sp, int64_t cp, int64_t seq) {
  PlanSpec p;
  p.model.name = "m";
  p.model.num_attention_heads = 32;
  p.model.num_key_value_heads = 8;
  p.cluster.num_gpus = gpus;
  p.seq_len = seq;
  p.knobs.sp = sp;
  p.knobs.cp = cp;
  return p;
}

TEST(ValidCp, DivisorsOfGpusOverSp) {
  EXPECT_EQ(valid_cp_degrees(16, 4), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(valid_cp_degrees(12, 1), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_TRUE(valid_cp_degrees(12, 5).empty());
}

TEST(CheckCp, GoodPlansPass) {
  EXPECT_TRUE(check_context_parallel(plan(16, 8, 2, 1 << 20), flag_where).is_ok());
  EXPECT_TRUE(check_context_parallel(plan(64, 1, 64, 1 << 20), flag_where).is_ok());  // no head rule for cp
  EXPECT_TRUE(check_plan(plan(8, 8, 1, 1000), flag_where).is_ok());                   // cp 1: sp pads, as before
}

TEST(CheckCp, BadPlansTable) {
  struct Case {
    PlanSpec p;
    std::string message;
  };
  const Case cases[] = {
      {plan(16, 8, 4, 1 << 20), "--cp: value 4 with sp 8 does not divide 16 GPUs into dp x sp x cp (allowed cp: 1, 2)"},
      {plan(16, 4, 3, 1 << 20), "--cp: value 3 with sp 4 does not divide 16 GPUs into dp x sp x cp (allowed cp: 1, 2, 4)"},
      {plan(16, 1, 0, 1 << 20),
       "--cp: value 0 with sp 1 does not divide 16 GPUs into dp x sp x cp (allowed cp: 1, 2, 4, 8, 16)"},
      {plan(16, 8, 2, 1000001),
       "--seq: value 1000001 is not divisible by 2 x sp x cp = 32 (the zigzag split of ring attention; allowed: a "
       "multiple of 32)"},
      {plan(16, 1, 16, 48), "--seq: value 48 is not divisible by 2 x sp x cp = 32 (the zigzag split of ring attention; "
                            "allowed: a multiple of 32)"},
  };
  for (const Case& c : cases) EXPECT_EQ(check_context_parallel(c.p, flag_where).message(), c.message);
}

PlanSpec on(PlanSpec p, const std::string& trainer) {
  p.stack = trainer_stack(trainer);
  p.knobs.zero_stage = 3;
  p.knobs.tiled_loss = trainer == "liger";  // --use_liger_kernel always fuses the loss
  settle_layout_attention(&p);  // the kernel the trainer runs the layout on (SDPA for a ring on hf)
  return p;
}

// Which trainer runs a ring, read from its record (configs/trainers): ArcticTraining never
// (DeepSpeed's Ulysses only); the Hugging Face Trainer through Accelerate's context parallel (ring
// only, FSDP2); the engine every layout. check_plan applies them.
TEST(CheckCp, TrainersThatRunTheRing) {
  EXPECT_TRUE(check_plan(on(plan(16, 1, 16, 1 << 20), "hf"), flag_where).is_ok());
  EXPECT_TRUE(check_plan(on(plan(16, 1, 8, 1 << 20), "liger"), flag_where).is_ok());
  EXPECT_TRUE(check_plan(on(plan(16, 8, 1, 1 << 20), "arctic"), flag_where).is_ok());  // cp 1: no ring rule
  PlanSpec zero1 = on(plan(16, 1, 16, 1 << 20), "hf");
  zero1.knobs.zero_stage = 1;
  PlanSpec split = on(plan(16, 1, 16, 1 << 20), "liger");
  split.knobs.offload_optimizer = OffloadDevice::kCpu;
  struct Case {
    PlanSpec p;
    std::string message;
  };
  const Case cases[] = {
      {on(plan(16, 1, 16, 1 << 20), "arctic"),
       "--cp: value 16 makes the layout ring (sp 1, cp 16), which trainer \"arctic\" does not run (its layouts: none, "
       "ulysses; trainers that run ring: axolotl, engine, hf, liger, megatron, torchtitan, trl, usp)"},
      {on(plan(16, 8, 2, 1 << 20), "hf"),
       "--cp: value 2 makes the layout ulysses_ring (sp 8, cp 2), which trainer \"hf\" does not run (its layouts: none, "
       "ulysses, ring; trainers that run ulysses_ring: engine, megatron, usp)"},
      {zero1,
       "--zero: value 1 with layout ring is not run by trainer \"hf\" (Accelerate's context parallel runs on FSDP2, which "
       "shards gradients and optimizer state at least (accelerate parallelism_config.py: cp needs FSDP2); allowed: 2, 3)"},
      {split,
       "--offload-optimizer: value \"cpu\" with layout ring, offload_params \"none\" is not run by trainer \"liger\" "
       "(FSDP2's CPUOffloadPolicy moves parameters, gradients and optimizer state together; allowed: none)"},
  };
  for (const Case& c : cases) EXPECT_EQ(check_plan(c.p, flag_where).message(), c.message);
}

TEST(CheckCp, EngineRunsTheRingButNotTheAllGatherVariant) {
  PlanSpec p = plan(16, 8, 2, 1 << 20);
  p.stack = trainer_stack("engine");
  EXPECT_TRUE(check_trainer_runs(p, flag_where).is_ok()) << check_trainer_runs(p, flag_where).message();
  p.knobs.cp_comm = CpComm::kAllGather;
  EXPECT_EQ(check_trainer_runs(p, flag_where).message(),
            "--cp-comm: value \"allgather\" is not run by trainer \"engine\" under layout ulysses_ring (allowed: ring)");
}

}  // namespace
}  // namespace spplan
