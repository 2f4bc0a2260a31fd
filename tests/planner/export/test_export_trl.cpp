// spplan export --format trl (planner/export/trl.cpp): the `trl sft --config` YAML.
// tests/scripts/launch_trl_test.py launches it with TRL's own code; here, what each plan value
// becomes.
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

// TRL's published 1M-token recipe: Qwen3-8B's shape (as Llama 3.1 8B's here) on 8 GPUs, a ring of
// 8 on FSDP2, offloaded checkpoints, TRL's chunked loss.
PlanSpec trl_ring_plan() {
  PlanSpec p = testing_export::llama8b_on("trl", 8, 1048576);
  p.knobs.sp = 1;
  p.knobs.cp = 8;
  p.knobs.cp_comm = CpComm::kAllGather;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.knobs.tiled_loss = true;
  settle_layout_attention(&p);
  return p;
}

TEST(ExportTrl, TheRecipeAsPricedWithTheAccelerateExportNamed) {
  const auto text = export_plan(trl_ring_plan(), ExportFormat::kTrl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\naccelerate_config: accelerate.yaml\nattn_implementation: sdpa\ndtype: bfloat16\n"));
  // The ring's head-tail chunks: 2 x cp.
  EXPECT_THAT(*text, HasSubstr("\nmax_length: 1048576\npad_to_multiple_of: 16\npacking: false\npadding_free: false\n"
                               "loss_type: chunked_nll\n"));
  EXPECT_THAT(*text, HasSubstr("\nbf16: true\ngradient_checkpointing: true\ngradient_checkpointing_kwargs:\n"
                               "  offload: true\n"));
  EXPECT_THAT(*text, HasSubstr("\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 1\n"));
  EXPECT_THAT(*text, HasSubstr("# Launch, in that folder (on each node): trl sft --config THIS.yaml\n"));
  EXPECT_THAT(*text, HasSubstr("to accelerate.yaml beside this file:\n# the processes and the FSDP2 context parallel"));
  EXPECT_THAT(*text, Not(HasSubstr("ds_config.json")));  // FSDP2: no DeepSpeed
  EXPECT_THAT(*text, HasSubstr("# Launch with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
}

// Ulysses on DeepSpeed: pad to sp, the ds_config beside the accelerate YAML; the full-logits loss
// and no checkpointing said as TRL's non-defaults (its SFTConfig checkpoints and runs bf16 by default).
TEST(ExportTrl, UlyssesFp32WithoutCheckpointsSaysTrlsNonDefaults) {
  PlanSpec p = testing_export::llama8b_on("trl", 8, 65536);
  p.knobs.sp = 4;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kNone;
  p.knobs.tiled_loss = false;
  p.knobs.precision = Precision::kFp32;
  settle_layout_attention(&p);
  const auto text = export_plan(p, ExportFormat::kTrl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\npad_to_multiple_of: 4\n"));
  EXPECT_THAT(*text, HasSubstr("\nloss_type: nll\n"));
  EXPECT_THAT(*text, HasSubstr("\ngradient_checkpointing: false\n"));
  EXPECT_THAT(*text, HasSubstr("\nbf16: false\n"));
  EXPECT_THAT(*text, HasSubstr("\nattn_implementation: sdpa\ndtype: float32\n"));
  EXPECT_THAT(*text, HasSubstr(" and `--format deepspeed` to ds_config.json beside this file:\n# the processes and "
                               "the DeepSpeed Ulysses settings"));
  EXPECT_THAT(*text, Not(HasSubstr("gradient_checkpointing_kwargs")));
}

// The optimizer's values are the HF Trainer flags' (one list: hf_trainer_argument_values), so the
// ds_config's and the Trainer's agree as transformers requires.
TEST(ExportTrl, TheOptimizerIsTheTrainerFlagsOwn) {
  PlanSpec p = trl_ring_plan();
  p.optimizer.lr = 2e-5;
  p.optimizer.train_steps = 12;
  p.optimizer.warmup_steps = 3;
  p.optimizer.lr_schedule = LrSchedule::kCosine;
  const auto text = export_plan(p, ExportFormat::kTrl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\nlearning_rate: 0.00002\n"));
  EXPECT_THAT(*text, HasSubstr("\nlr_scheduler_type: cosine\nwarmup_steps: 3\n"));
  EXPECT_THAT(*text, HasSubstr("\nmax_steps: 12\n"));
  const auto accelerate = export_plan(p, ExportFormat::kAccelerate);
  ASSERT_TRUE(accelerate.ok()) << accelerate.status().message();
  EXPECT_THAT(*accelerate, HasSubstr("--learning_rate 2e-05 "));
  EXPECT_THAT(*accelerate, HasSubstr(" --max_steps 12 "));
}

// A float the YAML cannot hold in 12 decimal places is written so that it reads back the same (YAML
// 1.1's float form: a dot and a signed exponent), where 1e-15 was written 0.0.
TEST(ExportTrl, FloatsReadBackAsThemselves) {
  PlanSpec p = trl_ring_plan();
  p.optimizer.adam_eps = 1e-15;
  p.optimizer.lr = 1.2345e-9;
  const auto text = export_plan(p, ExportFormat::kTrl);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("\nadam_epsilon: 1.0e-15\n"));
  EXPECT_THAT(*text, HasSubstr("\nlearning_rate: 1.2345e-09\n"));
  EXPECT_THAT(*text, HasSubstr("\nadam_beta2: 0.95\n"));  // 12 places hold it: decimal as before
}

// Only the trl record launches it; what TRL's CLI cannot do is refused by that record.
TEST(ExportTrl, OnlyTheTrlRecordAndWhatItsCliCanDo) {
  PlanSpec hf = trl_ring_plan();
  hf.stack = *load_trainer("hf");
  hf.knobs.tiled_loss = false;
  settle_layout_attention(&hf);
  const auto refused = export_plan(hf, ExportFormat::kTrl);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("key \"trainer\": value \"hf\" is not launched by --format trl"));
  EXPECT_EQ(parse_export_format("trl").value(), ExportFormat::kTrl);
}

}  // namespace
}  // namespace spplan
