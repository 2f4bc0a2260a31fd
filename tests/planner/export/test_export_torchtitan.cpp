// spplan export --format torchtitan (planner/export/torchtitan.cpp): TorchTitan 0.2.2's TOML job
// config. tests/scripts/export_check_torchtitan.py reads it with TorchTitan's own ConfigManager;
// here, what each plan value becomes.
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

// Llama 3.1 8B on two nodes of 8 H100s: FSDP2 over 4 x ring 4, checkpointed.
PlanSpec torchtitan_plan() {
  PlanSpec p = testing_export::llama8b_on("torchtitan", 16, 131072);
  p.knobs.sp = 1;
  p.knobs.cp = 4;
  p.knobs.cp_comm = CpComm::kAllGather;
  p.knobs.zero_stage = 3;
  p.knobs.act_ckpt = ActCkpt::kFull;
  p.knobs.grad_accum_steps = 2;
  settle_layout_attention(&p);
  return p;
}

std::string exported(const PlanSpec& p) {
  const auto text = export_plan(p, ExportFormat::kTorchtitan);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : std::string();
}

TEST(ExportTorchtitan, TheLayoutBatchAndModelFlavour) {
  const std::string t = exported(torchtitan_plan());
  EXPECT_THAT(t, HasSubstr("--nnodes 2 --nproc_per_node 8 --rdzv_backend c10d"));
  EXPECT_THAT(t, HasSubstr("[model]\nname = \"llama3\"\nflavor = \"8B\"\n"));
  EXPECT_THAT(t, HasSubstr("data_parallel_shard_degree = 4\n"));
  EXPECT_THAT(t, HasSubstr("context_parallel_degree = 4\ncontext_parallel_rotate_method = \"allgather\"\n"));
  // TorchTitan derives the accumulation from the batch sizes: global = local x accumulation x dp.
  EXPECT_THAT(t, HasSubstr("local_batch_size = 1\nglobal_batch_size = 8 "));
  EXPECT_THAT(t, HasSubstr("seq_len = 131072\n"));
  EXPECT_THAT(t, HasSubstr("[activation_checkpoint]\nmode = \"full\"\n"));
  EXPECT_THAT(t, HasSubstr("mixed_precision_param = \"bfloat16\"\n"));
  EXPECT_THAT(t, HasSubstr("enable_cpu_offload = false\n"));
  EXPECT_THAT(t, HasSubstr("[compile]\nenable = false\n"));
}

// Values TorchTitan says otherwise: no clipping is an infinite norm (it always clips, and 0 would
// zero the gradients), a constant rate a decay phase of length 0, fp32 its float32 parameters.
TEST(ExportTorchtitan, ClippingScheduleAndPrecisionAsTorchtitanSaysThem) {
  PlanSpec p = torchtitan_plan();
  p.optimizer.grad_clip = 0;
  p.optimizer.lr_schedule = LrSchedule::kConstant;
  p.knobs.precision = Precision::kFp32;
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kCpu;
  settle_layout_attention(&p);
  const std::string t = exported(p);
  EXPECT_THAT(t, HasSubstr("max_norm = inf\n"));
  EXPECT_THAT(t, HasSubstr("decay_ratio = 0.0 "));
  EXPECT_THAT(t, Not(HasSubstr("decay_type")));
  EXPECT_THAT(t, HasSubstr("mixed_precision_param = \"float32\"\n"));
  EXPECT_THAT(t, HasSubstr("enable_cpu_offload = true\n"));
  p.optimizer.grad_clip = 0.5;
  p.optimizer.lr_schedule = LrSchedule::kCosine;
  p.optimizer.min_lr = p.optimizer.lr / 10;
  const std::string cosine = exported(p);
  EXPECT_THAT(cosine, HasSubstr("max_norm = 0.5\n"));
  EXPECT_THAT(cosine, HasSubstr("decay_type = \"cosine\"\nmin_lr_factor = 0.1\n"));
}

// What TorchTitan does not run is refused by its record before any text is written.
TEST(ExportTorchtitan, PlansItDoesNotRunAreOneLine) {
  PlanSpec p = torchtitan_plan();
  p.knobs.sp = 2;  // no Ulysses
  auto text = export_plan(p, ExportFormat::kTorchtitan);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("which trainer \"torchtitan\" does not run"));
  p = torchtitan_plan();
  p.model = *load_model("qwen2.5-7b");
  text = export_plan(p, ExportFormat::kTorchtitan);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("key \"model\": value \"qwen2.5-7b\" is not a model trainer \"torchtitan\" builds"));
}

}  // namespace
}  // namespace spplan
