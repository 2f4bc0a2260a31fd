// spplan export --format swift (planner/export/swift.cpp): ms-swift's `swift sft` script.
// tests/scripts/export_check_ms_swift.py parses it with ms-swift's own arguments and mesh; here,
// what each plan value becomes, and the split ms-swift makes itself.
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

// Llama 3.1 8B (8 key-value heads) on four nodes: Ulysses 8 x zigzag ring 2, ZeRO-3 offloaded.
PlanSpec usp_plan() {
  PlanSpec p = testing_export::llama8b_on("usp", 32, 131072);
  p.knobs.sp = 8;
  p.knobs.cp = 2;
  p.knobs.zero_stage = 3;
  p.knobs.offload_optimizer = p.knobs.offload_params = OffloadDevice::kCpu;
  p.knobs.act_ckpt = ActCkpt::kFull;
  settle_layout_attention(&p);
  return p;
}

TEST(ExportSwift, OneSequenceParallelSizeThatMsSwiftSplitsAsPlanned) {
  const auto text = export_plan(usp_plan(), ExportFormat::kSwift);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("NPROC_PER_NODE=8 NNODES=4 NODE_RANK=${NODE_RANK:?} MASTER_ADDR=${MASTER_ADDR:?}"));
  EXPECT_THAT(*text, HasSubstr("gcd(8 key-value heads, 16) = 8 ranks, a zigzag ring over 2"));
  EXPECT_THAT(*text, HasSubstr("  --sequence_parallel_size 16 \\\n  --padding_free true \\\n"));
  EXPECT_THAT(*text, HasSubstr("  --deepspeed zero3_offload \\\n"));
  EXPECT_THAT(*text, HasSubstr("  --gradient_checkpointing true \\\n"));
  EXPECT_THAT(*text, HasSubstr(" --bf16 true\n"));  // ms-swift's bf16 takes a value
  EXPECT_THAT(*text, HasSubstr("--model \"$MODEL\""));  // no plan text in the command itself
}

// A multimodal model's vision tower and projector are frozen or trained as the plan priced them;
// a text model's script says nothing of them.
TEST(ExportSwift, EncodersAreFrozenAsPriced) {
  PlanSpec p = usp_plan();
  EXPECT_THAT(*export_plan(p, ExportFormat::kSwift), Not(HasSubstr("--freeze_vit")));
  p.model.encoder_params = 4e8;
  EXPECT_THAT(*export_plan(p, ExportFormat::kSwift), HasSubstr("  --freeze_vit true \\\n  --freeze_aligner true \\\n"));
  p.stack.freezes_encoders = false;  // a record of the user's that trains them
  EXPECT_THAT(*export_plan(p, ExportFormat::kSwift), HasSubstr("  --freeze_vit false \\\n  --freeze_aligner false \\\n"));
}

// ms-swift checkpoints by default: a plan without checkpointing says false. Without a ring no
// packing is asked for, and one GPU needs no sequence-parallel size.
TEST(ExportSwift, CheckpointingOffIsSaidAndPackingOnlyWithARing) {
  PlanSpec p = usp_plan();
  p.cluster.num_gpus = 8;
  p.knobs.cp = 1;
  p.knobs.zero_stage = 2;
  p.knobs.offload_params = OffloadDevice::kNone;
  p.knobs.act_ckpt = ActCkpt::kNone;
  const auto text = export_plan(p, ExportFormat::kSwift);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("  --gradient_checkpointing false \\\n"));
  EXPECT_THAT(*text, HasSubstr("  --deepspeed zero2_offload \\\n"));
  EXPECT_THAT(*text, Not(HasSubstr("--padding_free")));
  EXPECT_THAT(*text, HasSubstr("--sequence_parallel_size 8 "));
}

// ms-swift puts Ulysses over gcd(key-value heads, sp x cp): another split is refused with the one
// it would run, and the search never returns it.
TEST(ExportSwift, ASplitMsSwiftDoesNotMakeIsOneLine) {
  PlanSpec p = usp_plan();
  p.cluster.num_gpus = 8;
  p.knobs.sp = 2;
  p.knobs.cp = 4;
  settle_layout_attention(&p);
  EXPECT_TRUE(trainer_runs(p));
  EXPECT_FALSE(some_format_launches(p));
  const auto text = export_plan(p, ExportFormat::kSwift);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            "key \"knobs.sp\": value 2 with cp 4 cannot be expressed for --format swift (it takes 8 sequence-parallel "
            "ranks and runs Ulysses over gcd(8 key-value heads, 8) = 8 of them, a ring over the rest; allowed: sp 8, "
            "cp 1)");
}

}  // namespace
}  // namespace spplan
