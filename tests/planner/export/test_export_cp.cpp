// Exports of ring attention (cp) and the Ulysses x ring hybrid: Accelerate for ring only,
// Megatron-LM for every layout, and a table of plans each target cannot express.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/export/export.hpp"

namespace spplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Llama-3.1-8B on 32 H100s (4 nodes), 1M tokens, ZeRO-3, full checkpointing, no tiling, on a
// trainer that runs the layout: the Hugging Face Trainer for a ring alone (Accelerate's context
// parallel), spplan-engine for Ulysses x ring, ArcticTraining for Ulysses alone.
PlanSpec cp_plan(int64_t sp, int64_t cp) {
  PlanSpec p;
  p.stack = trainer_stack(cp == 1 ? "arctic" : sp == 1 ? "hf" : "engine");
  p.model = load_model("llama-3.1-8b").value();
  p.cluster.gpu = load_gpu("h100-80gb").value();
  p.cluster.num_gpus = 32;
  p.seq_len = 1 << 20;
  p.knobs.sp = sp;
  p.knobs.cp = cp;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
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

TEST(ExportCp, MegatronHybridIsA2aPlusP2pWithHierarchicalSizes) {
  const std::string sh = exported(cp_plan(8, 4), ExportFormat::kMegatron);
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
  EXPECT_THAT(exported(cp_plan(1, 32), ExportFormat::kMegatron),
              HasSubstr(" --context-parallel-size 32 --cp-comm-type p2p --micro-batch-size"));
  PlanSpec ag = cp_plan(1, 16);
  ag.knobs.cp_comm = CpComm::kAllGather;
  ag.knobs.zero_stage = 2;
  const std::string sh = exported(ag, ExportFormat::kMegatron);
  EXPECT_THAT(sh, HasSubstr(" --context-parallel-size 16 --cp-comm-type all_gather "));
  EXPECT_THAT(sh, HasSubstr(" --global-batch-size 2 --bf16 --use-megatron-fsdp "));
  EXPECT_THAT(exported(cp_plan(8, 1), ExportFormat::kMegatron),
              HasSubstr(" --context-parallel-size 8 --cp-comm-type a2a --micro-batch-size 1 --global-batch-size 4 "));
}

TEST(ExportCp, RefusalsTable) {
  struct Case {
    PlanSpec plan;
    ExportFormat format;
    std::string message;
  };
  PlanSpec hybrid = cp_plan(8, 4);
  PlanSpec ring = cp_plan(1, 8);
  PlanSpec ring_zero1 = ring;
  ring_zero1.knobs.zero_stage = 1;
  PlanSpec ring_opt_only = ring;
  ring_opt_only.knobs.offload_optimizer = OffloadDevice::kCpu;
  PlanSpec arctic_ring = ring;
  arctic_ring.stack = trainer_stack("arctic");
  PlanSpec hybrid_ag = hybrid;
  hybrid_ag.knobs.cp_comm = CpComm::kAllGather;
  PlanSpec tiled = hybrid;
  tiled.knobs.tiled_mlp = true;
  PlanSpec tiled_loss = hybrid;
  tiled_loss.knobs.tiled_loss = true;
  PlanSpec param_offload = hybrid;
  param_offload.knobs.offload_params = OffloadDevice::kCpu;
  param_offload.knobs.offload_optimizer = OffloadDevice::kCpu;
  PlanSpec opt_offload_z3 = hybrid;
  opt_offload_z3.knobs.offload_optimizer = OffloadDevice::kCpu;
  const std::string no_ring = " (it has Ulysses sequence parallelism only, no ring attention) (allowed: 1; --format "
                              "megatron takes ring and hybrid plans, --format accelerate ring-only ones)";
  const Case cases[] = {
      {hybrid, ExportFormat::kAccelerate,
       "key \"knobs.cp\": value 4 with sp 8 is not run by Accelerate's context parallel (its ParallelismConfig refuses "
       "cp_size and sp_size together) (allowed: sp 1 for ring only; Ulysses x ring runs with --trainer engine or "
       "--format megatron)"},
      {ring, ExportFormat::kDeepSpeed, "key \"knobs.cp\": value 8 cannot be expressed for DeepSpeed" + no_ring},
      {ring, ExportFormat::kArctic, "key \"knobs.cp\": value 8 cannot be expressed for ArcticTraining" + no_ring},
      {ring, ExportFormat::kTorchrun,
       "key \"knobs.cp\": value 8 cannot be expressed for the Hugging Face Trainer on DeepSpeed" + no_ring},
      {arctic_ring, ExportFormat::kAccelerate,
       "key \"knobs.cp\": value 8 is not run by trainer \"arctic\" (ArcticTraining has Ulysses only, no ring "
       "attention; allowed: 1; ring and Ulysses x ring plans: --trainer engine; ring only: --trainer hf or liger)"},
      {ring_zero1, ExportFormat::kAccelerate,
       "key \"knobs.zero_stage\": value 1 with cp 8 is not run by Accelerate's context parallel (it runs on FSDP2, "
       "which shards gradients and optimizer state at least) (allowed: 2, 3)"},
      {ring_opt_only, ExportFormat::kAccelerate,
       "key \"knobs.offload_optimizer\": value \"cpu\" with offload_params \"none\" and cp 8 is not run by "
       "Accelerate's FSDP2 (its CPU offload moves parameters, gradients and optimizer state together) (allowed: both "
       "none, or both cpu)"},
      {hybrid_ag, ExportFormat::kMegatron,
       "key \"knobs.cp_comm\": value \"allgather\" is not run by trainer \"engine\" (spplan run passes K/V around "
       "the ring; allowed: ring)"},
      {tiled, ExportFormat::kMegatron,
       "key \"knobs.tiled_mlp\": value true cannot be expressed for Megatron-LM (no sequence-tiled MLP) (allowed: "
       "false; edit the plan file and re-check it with spplan estimate)"},
      {tiled_loss, ExportFormat::kMegatron,
       "key \"knobs.tiled_loss\": value true cannot be expressed for Megatron-LM (its cross-entropy takes the whole "
       "[tokens x vocab] logits, no chunked loss) (allowed: false; edit the plan file and re-check it with spplan "
       "estimate)"},
      {param_offload, ExportFormat::kMegatron,
       "key \"knobs.offload_params\": value \"cpu\" cannot be expressed for Megatron-LM (it keeps parameters on the "
       "GPU) (allowed: none)"},
      {opt_offload_z3, ExportFormat::kMegatron,
       "key \"knobs.offload_optimizer\": value \"cpu\" cannot be expressed for Megatron-LM (--optimizer-cpu-offload "
       "needs --use-distributed-optimizer, ZeRO stage 1) (allowed: none, or cpu with zero_stage 1)"},
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
  PlanSpec p = cp_plan(8, 1);
  const std::string y = exported(p, ExportFormat::kAccelerate);
  EXPECT_THAT(y, HasSubstr("distributed_type: DEEPSPEED\n"));
  EXPECT_THAT(y, Not(HasSubstr("cp_size")));
}

}  // namespace
}  // namespace spplan
