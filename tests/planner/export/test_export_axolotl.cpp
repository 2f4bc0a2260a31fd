// spplan export --format axolotl (planner/export/axolotl.cpp): Axolotl's YAML.
// tests/scripts/export_check_axolotl.py validates it with Axolotl's own schema, Trainer builder and
// split; here, what each plan value becomes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/export/export.hpp"
#include "tests/planner/export/fixtures.hpp"

namespace spplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Llama 3.1 8B on two nodes: a ring of 8 at 256K tokens, ZeRO-3 offloaded, both tilings.
PlanSpec axolotl_plan() {
  PlanSpec p = testing_export::llama8b_on("axolotl", 16, 262144);
  p.knobs.sp = 1;
  p.knobs.cp = 8;
  p.knobs.cp_comm = CpComm::kAllGather;
  p.knobs.zero_stage = 3;
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kCpu;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  settle_layout_attention(&p);
  return p;
}

TEST(ExportAxolotl, TheRingTheTilingsAndDeepSpeedAsPriced) {
  const auto text = export_plan(axolotl_plan(), ExportFormat::kAxolotl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\ncontext_parallel_size: 8\nring_attn_func: varlen_llama3\nheads_k_stride: 1\n"));
  EXPECT_THAT(*text, HasSubstr("\nsequence_len: 262144\nsample_packing: true\nmicro_batch_size: 1\n"));
  // DeepSpeed's ceil(s / h) shards, which the plan is priced with: 32768 tokens a rank / 4096.
  EXPECT_THAT(*text, HasSubstr("\ntiled_mlp: true\ntiled_mlp_num_shards: 8\ntiled_mlp_use_original_mlp: true\n"));
  EXPECT_THAT(*text, HasSubstr("plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rope: true\n"));
  EXPECT_THAT(*text, HasSubstr("\nliger_fused_linear_cross_entropy: true\n"));
  EXPECT_THAT(*text, HasSubstr("\ndeepspeed:\n  bf16:\n    enabled: true\n"));
  EXPECT_THAT(*text, HasSubstr("    offload_param:\n      device: cpu\n"));
  // A list of mappings: the first key after the dash, the others under it.
  EXPECT_THAT(*text, HasSubstr("datasets:\n  - path: HuggingFaceH4/ultrachat_200k\n    type: chat_template\n"));
  EXPECT_THAT(*text, HasSubstr("--nproc_per_node 8 --nnodes 2 --node_rank NODE_RANK"));
}

// Without tilings nothing of either is written; without a ring no ring key.
TEST(ExportAxolotl, NoRingNoTilingWritesNone) {
  PlanSpec p = axolotl_plan();
  p.cluster.num_gpus = 8;
  p.seq_len = 16384;
  p.knobs.cp = 1;
  p.knobs.offload_params = OffloadDevice::kNone;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = false;
  settle_layout_attention(&p);
  const auto text = export_plan(p, ExportFormat::kAxolotl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  for (const char* key : {"context_parallel_size", "ring_attn_func", "tiled_mlp", "plugins", "liger_"}) {
    EXPECT_THAT(*text, Not(HasSubstr(std::string("\n") + key))) << key;
  }
  EXPECT_THAT(*text, HasSubstr("--launcher torchrun -- --nproc_per_node 8\n"));
}

// A multimodal model's encoders: freeze_mm_modules as priced (the export check runs Axolotl's own
// freeze on the model and counts what it freezes); a text model's YAML says nothing of them.
TEST(ExportAxolotl, EncodersAreFrozenAsPriced) {
  PlanSpec p = axolotl_plan();
  EXPECT_THAT(*export_plan(p, ExportFormat::kAxolotl), Not(HasSubstr("freeze_mm_modules")));
  p.model.encoder_params = 4e8;
  EXPECT_THAT(*export_plan(p, ExportFormat::kAxolotl), HasSubstr("\nfreeze_mm_modules: false\n"));
  p.stack.freezes_encoders = true;
  EXPECT_THAT(*export_plan(p, ExportFormat::kAxolotl), HasSubstr("\nfreeze_mm_modules: true\n"));
}

// Axolotl makes a 1-step warm-up 2 steps: the DeepSpeed scheduler is written with 2 as well, or
// transformers refuses the config at start-up.
TEST(ExportAxolotl, AOneStepWarmUpIsTheTwoAxolotlRuns) {
  PlanSpec p = axolotl_plan();
  p.optimizer.warmup_steps = 0;
  p.optimizer.lr_schedule = LrSchedule::kCosine;
  p.optimizer.train_steps = 100;
  const auto text = export_plan(p, ExportFormat::kAxolotl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\nwarmup_steps: 2\n"));
  EXPECT_THAT(*text, HasSubstr("      warmup_num_steps: 2\n"));
}

// What Axolotl's ring cannot run is one line naming the key (the record's refusals).
TEST(ExportAxolotl, TwoRowsInTheRingAreRefused) {
  PlanSpec p = axolotl_plan();
  p.knobs.micro_batch = 2;
  const auto text = export_plan(p, ExportFormat::kAxolotl);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("micro_batch"));
  EXPECT_EQ(text.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace spplan
