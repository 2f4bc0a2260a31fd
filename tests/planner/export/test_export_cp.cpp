// Exports of ring attention (cp) and the Ulysses x ring hybrid: Accelerate for ring only,
// Megatron-LM for every layout, and a table of plans each target cannot express.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/export/export.hpp"

namespace spplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Llama-3.1-8B on 32 H100s (4 nodes), 1M tokens, ZeRO-3, full checkpointing, no tiling, on a
// trainer that runs the layout (the Hugging Face Trainer for a ring alone, Accelerate's context
// parallel; spplan-engine for Ulysses x ring; ArcticTraining for Ulysses alone) unless named, with
// the attention kernel the trainer runs that layout on.
PlanSpec cp_plan(int64_t sp, int64_t cp, const std::string& trainer = "") {
  PlanSpec p;
  p.stack = trainer_stack(!trainer.empty() ? trainer : cp == 1 ? "arctic" : sp == 1 ? "hf" : "engine");
  p.model = load_model("llama-3.1-8b").value();
  p.cluster.gpu = load_gpu("h100-80gb").value();
  p.cluster.num_gpus = 32;
  p.seq_len = 1 << 20;
  p.knobs.sp = sp;
  p.knobs.cp = cp;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
  settle_layout_attention(&p);
  return p;
}

std::string exported(const PlanSpec& plan, ExportFormat format) {
  auto text = export_plan(plan, format);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : std::string();
}

TEST(ExportCp, AccelerateRingOnlyOnFsdp2) {
  const std::string y = exported(cp_plan(1, 8), ExportFormat::kAccelerate);
  EXPECT_THAT(y, HasSubstr("distributed_type: FSDP\n"));
  EXPECT_THAT(y, HasSubstr("  fsdp_version: 2\n"));
  EXPECT_THAT(y, HasSubstr("  fsdp_reshard_after_forward: true\n"));
  EXPECT_THAT(y, HasSubstr("  parallelism_config_cp_size: 8\n"));
  EXPECT_THAT(y, HasSubstr("  parallelism_config_dp_shard_size: 4\n"));  // 32 / 8
  EXPECT_THAT(y, HasSubstr("  parallelism_config_cp_comm_strategy: alltoall\n"));
  EXPECT_THAT(y, Not(HasSubstr("sp_size")));
  EXPECT_THAT(y, HasSubstr("mixed_precision: bf16\n"));
  PlanSpec ag = cp_plan(1, 8);
  ag.knobs.cp_comm = CpComm::kAllGather;
  ag.knobs.zero_stage = 2;
  const std::string g = exported(ag, ExportFormat::kAccelerate);
  EXPECT_THAT(g, HasSubstr("  parallelism_config_cp_comm_strategy: allgather\n"));
  EXPECT_THAT(g, HasSubstr("  fsdp_reshard_after_forward: false\n"));
}

// The Trainer checkpoints under FSDP2, never the YAML (transformers refuses both at once, and TRL
// turns gradient_checkpointing on by default): its flags say true or false, and the offload.
TEST(ExportCp, AccelerateRingCheckpointsThroughTheTrainersFlags) {
  PlanSpec offloaded = cp_plan(1, 8);
  offloaded.knobs.act_ckpt = ActCkpt::kOffload;
  const std::string y = exported(offloaded, ExportFormat::kAccelerate);
  EXPECT_THAT(y, HasSubstr("  fsdp_activation_checkpointing: false\n"));
  EXPECT_THAT(y, HasSubstr(" --gradient_checkpointing --gradient_checkpointing_kwargs '{\"offload\": true}'"));
  const std::string full = exported(cp_plan(1, 8), ExportFormat::kAccelerate);
  EXPECT_THAT(full, HasSubstr("  fsdp_activation_checkpointing: false\n"));
  EXPECT_THAT(full, HasSubstr(" --gradient_checkpointing\n"));
  EXPECT_THAT(full, Not(HasSubstr("offload\": true")));
  PlanSpec none = cp_plan(1, 8);
  none.knobs.act_ckpt = ActCkpt::kNone;
  EXPECT_THAT(exported(none, ExportFormat::kAccelerate), HasSubstr(" --gradient_checkpointing false\n"));
}

// What train.py must do with its sequences, in TRL's names: a ring of 8 cuts each into 16 chunks
// and packs nothing; Ulysses 8 needs a multiple of 8 and position_ids in every batch.
TEST(ExportCp, TrainerExportsSayThePaddingAndBatchFieldsTheSplitNeeds) {
  const std::string ring = exported(cp_plan(1, 8), ExportFormat::kAccelerate);
  EXPECT_THAT(ring, HasSubstr("# train.py trains sequences of 1048576 tokens (TRL: --max_length 1048576), each padded "
                              "to a multiple of 16 (TRL: --pad_to_multiple_of 16).\n"));
  EXPECT_THAT(ring, HasSubstr("(TRL refuses packing under cp: --packing false)"));
  EXPECT_THAT(ring, Not(HasSubstr("position_ids")));
  const std::string ulysses = exported(cp_plan(8, 1, "hf"), ExportFormat::kAccelerate);
  EXPECT_THAT(ulysses, HasSubstr("each padded to a multiple of 8 (TRL: --pad_to_multiple_of 8).\n"));
  EXPECT_THAT(ulysses, HasSubstr("every batch carries position_ids"));
  EXPECT_THAT(exported(cp_plan(8, 1, "hf"), ExportFormat::kTorchrun), HasSubstr("--pad_to_multiple_of 8"));
}

TEST(ExportCp, MegatronHybridIsA2aPlusP2pWithHierarchicalSizes) {
  const std::string sh = exported(cp_plan(8, 4, "megatron"), ExportFormat::kMegatron);
  EXPECT_THAT(sh, HasSubstr("torchrun --nnodes 4 --nproc-per-node 8 "));
  EXPECT_THAT(sh, HasSubstr(" --context-parallel-size 32 --cp-comm-type a2a+p2p "
                            "--hierarchical-context-parallel-sizes 8 4 "));
  EXPECT_THAT(sh, HasSubstr(" --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
                            "--kv-channels 128 --group-query-attention --num-query-groups 8 --seq-length 1048576 "));
  EXPECT_THAT(sh, HasSubstr(" --micro-batch-size 1 --global-batch-size 1 --bf16 --use-megatron-fsdp "
                            "--data-parallel-sharding-strategy optim_grads_params --recompute-granularity full "));
  EXPECT_THAT(sh, HasSubstr(" --adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08 "));
  EXPECT_THAT(sh, HasSubstr("# spplan export (megatron): llama-3.1-8b on 32 x h100-80gb (4 nodes), seq_len 1048576, "
                            "sp 8, cp 4 (ring), dp 1,"));
}

TEST(ExportCp, MegatronEachLayoutItsCommType) {
  EXPECT_THAT(exported(cp_plan(1, 32, "megatron"), ExportFormat::kMegatron),
              HasSubstr(" --context-parallel-size 32 --cp-comm-type p2p --micro-batch-size"));
  PlanSpec ag = cp_plan(1, 16, "megatron");
  ag.knobs.cp_comm = CpComm::kAllGather;
  ag.knobs.zero_stage = 2;
  const std::string sh = exported(ag, ExportFormat::kMegatron);
  EXPECT_THAT(sh, HasSubstr(" --context-parallel-size 16 --cp-comm-type all_gather "));
  EXPECT_THAT(sh, HasSubstr(" --global-batch-size 2 --bf16 --use-megatron-fsdp "));
  EXPECT_THAT(exported(cp_plan(8, 1, "megatron"), ExportFormat::kMegatron),
              HasSubstr(" --context-parallel-size 8 --cp-comm-type a2a --micro-batch-size 1 --global-batch-size 4 "));
}

// Each refusal names the key, its value, who refuses it and why (the trainer's record), and what
// is allowed instead.
TEST(ExportCp, RefusalsTable) {
  struct Case {
    PlanSpec plan;
    ExportFormat format;
    std::string message;
  };
  PlanSpec ring = cp_plan(1, 8);
  PlanSpec hf_hybrid = cp_plan(8, 4, "hf");
  PlanSpec ring_zero1 = ring;
  ring_zero1.knobs.zero_stage = 1;
  PlanSpec ring_opt_only = ring;
  ring_opt_only.knobs.offload_optimizer = OffloadDevice::kCpu;
  PlanSpec arctic_ring = cp_plan(1, 8, "arctic");
  PlanSpec hybrid_ag = cp_plan(8, 4);
  hybrid_ag.knobs.cp_comm = CpComm::kAllGather;
  PlanSpec megatron_tiled = cp_plan(8, 4, "megatron");
  megatron_tiled.knobs.tiled_mlp = true;
  PlanSpec megatron_tiled_loss = cp_plan(8, 4, "megatron");
  megatron_tiled_loss.knobs.tiled_loss = true;
  PlanSpec megatron_param_offload = cp_plan(8, 4, "megatron");
  megatron_param_offload.knobs.offload_params = megatron_param_offload.knobs.offload_optimizer = OffloadDevice::kCpu;
  PlanSpec megatron_opt_offload_z3 = cp_plan(8, 4, "megatron");
  megatron_opt_offload_z3.knobs.offload_optimizer = OffloadDevice::kCpu;
  const Case cases[] = {
      {hf_hybrid, ExportFormat::kAccelerate,
       "key \"knobs.cp\": value 4 makes the layout ulysses_ring (sp 8, cp 4), which trainer \"hf\" does not run (its "
       "layouts: none, ulysses, ring; trainers that run ulysses_ring: engine, megatron, usp)"},
      {ring, ExportFormat::kDeepSpeed,
       "key \"knobs.cp\": value 8 (layout ring) cannot be expressed for --format deepspeed (DeepSpeed has no ring "
       "attention (a ring plan's accelerate YAML runs FSDP2, without a ds_config); allowed: the layouts none, ulysses)"},
      {ring, ExportFormat::kTorchrun,
       "key \"knobs.cp\": value 8 (layout ring) cannot be expressed for --format torchrun (it runs the Trainer on "
       "DeepSpeed, which has no ring attention; --format accelerate launches the ring on FSDP2; allowed: the layouts "
       "none, ulysses)"},
      {ring, ExportFormat::kArctic,
       "key \"trainer\": value \"hf\" is not launched by --format arctic (its formats: torchrun, accelerate, deepspeed)"},
      {arctic_ring, ExportFormat::kArctic,
       "key \"knobs.cp\": value 8 makes the layout ring (sp 1, cp 8), which trainer \"arctic\" does not run (its "
       "layouts: none, ulysses; trainers that run ring: axolotl, engine, hf, liger, megatron, torchtitan, trl, usp)"},
      {ring_zero1, ExportFormat::kAccelerate,
       "key \"knobs.zero_stage\": value 1 with layout ring is not run by trainer \"hf\" (Accelerate's context parallel "
       "runs on FSDP2, which shards gradients and optimizer state at least (accelerate parallelism_config.py: cp needs "
       "FSDP2); allowed: 2, 3)"},
      {ring_opt_only, ExportFormat::kAccelerate,
       "key \"knobs.offload_optimizer\": value \"cpu\" with layout ring, offload_params \"none\" is not run by trainer "
       "\"hf\" (FSDP2's CPUOffloadPolicy moves parameters, gradients and optimizer state together; allowed: none)"},
      {hybrid_ag, ExportFormat::kTorchrun,
       "key \"knobs.cp_comm\": value \"allgather\" is not run by trainer \"engine\" under layout ulysses_ring (allowed: "
       "ring)"},
      {megatron_tiled, ExportFormat::kMegatron,
       "key \"knobs.tiled_mlp\": value true is not run by trainer \"megatron\" (it has no sequence-tiled MLP; allowed: "
       "false)"},
      {megatron_tiled_loss, ExportFormat::kMegatron,
       "key \"knobs.tiled_loss\": value true is not run by trainer \"megatron\" (its cross-entropy takes the whole "
       "[tokens x vocab] logits, no chunked loss; allowed: false)"},
      {megatron_param_offload, ExportFormat::kMegatron,
       "key \"knobs.offload_params\": value \"cpu\" is not run by trainer \"megatron\" (Megatron-LM keeps the "
       "parameters on the GPU; allowed: none (the plan has other refused knobs too))"},
      {megatron_opt_offload_z3, ExportFormat::kMegatron,
       "key \"knobs.offload_optimizer\": value \"cpu\" with zero_stage 3 is not run by trainer \"megatron\" "
       "(--optimizer-cpu-offload needs --use-distributed-optimizer, ZeRO stage 1; allowed: none)"},
  };
  for (const Case& c : cases) {
    auto r = export_plan(c.plan, c.format);
    ASSERT_FALSE(r.ok()) << to_string(c.format);
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(ExportCp, EnginePlansExportAsSpplanRunWithTheirRing) {
  PlanSpec p = cp_plan(2, 4);
  p.cluster.num_gpus = 8;  // the engine's export runs on one machine
  const std::string sh = exported(p, ExportFormat::kTorchrun);
  EXPECT_THAT(sh, HasSubstr("--no-python spplan run --plan"));
  EXPECT_THAT(sh, HasSubstr("cp 4 (ring)"));
}

TEST(ExportCp, ExistingFormatsUnchangedAtCpOne) {
  // A cp 1 plan exports as before: no FSDP, no cp keys.
  PlanSpec p = cp_plan(8, 1, "hf");
  const std::string y = exported(p, ExportFormat::kAccelerate);
  EXPECT_THAT(y, HasSubstr("distributed_type: DEEPSPEED\n"));
  EXPECT_THAT(y, Not(HasSubstr("cp_size")));
}

}  // namespace
}  // namespace spplan
