// engine/run/resume_settings.hpp: what a resume takes from the checkpoint, what it refuses, and what
// it says. LibTorch-free: options parsed as `run` parses them, checkpoints as values.
#include "engine/run/resume_settings.hpp"

#include <gtest/gtest.h>

namespace spplan::engine {
namespace {

Result<RunOptions> parse(std::vector<std::string> words) {
  std::vector<const char*> argv{"spplan-engine", "run", "--model", "tiny-llama", "--sp", "1", "--nproc", "1"};
  for (const auto& w : words) argv.push_back(w.c_str());
  return parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
}

// A checkpoint of step 3 of a 20-step cosine run at lr 2e-3, weight decay on every parameter.
LoadedCheckpoint checkpoint() {
  LoadedCheckpoint ck;
  ck.folder = "ckpt/ckpt-000003";
  ck.meta.step = 3;
  ck.meta.next_sequence = 3;
  TrainingSettings t;
  t.optimizer.lr = 2e-3;
  t.optimizer.lr_schedule = LrSchedule::kCosine;
  t.optimizer.warmup_steps = 2;
  t.optimizer.train_steps = 20;
  t.optimizer.grad_clip = 1.0;
  t.schedule_steps = 20;
  t.optimizer.adam_beta2 = 0.99;
  t.weight_decay_all = true;
  t.seq_len = 1024;
  t.next_token = 3072;
  ck.meta.settings = t;
  return ck;
}

TEST(ResumeSettings, WhatIsNotGivenComesFromTheCheckpoint) {
  auto o = parse({"--seq", "1024", "--resume", "ckpt"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  const auto notes = continue_settings(&*o, checkpoint(), false);
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(*notes, "");
  EXPECT_DOUBLE_EQ(o->plan.optimizer.lr, 2e-3);
  EXPECT_EQ(o->plan.optimizer.lr_schedule, LrSchedule::kCosine);
  EXPECT_EQ(o->plan.optimizer.warmup_steps, 2);
  EXPECT_DOUBLE_EQ(o->plan.optimizer.grad_clip, 1.0);
  EXPECT_DOUBLE_EQ(o->plan.optimizer.adam_beta2, 0.99);
  EXPECT_TRUE(o->weight_decay_all);
  EXPECT_EQ(o->schedule_steps, 20);
  EXPECT_EQ(o->steps, 20);  // without --steps: to the schedule's end
}

TEST(ResumeSettings, AGivenSettingThatDiffersIsRefusedWithBothValues) {
  const struct {
    std::vector<std::string> flags;
    std::string expected;
  } cases[] = {
      {{"--lr", "0.001"}, "--lr: value 0.001 differs from the 0.002 that ckpt/ckpt-000003 was trained with (allowed: 0.002"},
      {{"--lr-schedule", "linear"}, "--lr-schedule: value linear differs from the cosine that"},
      {{"--train-steps", "30"}, "--train-steps: value 30 differs from the 20 that"},
      {{"--adam-beta2", "0.95"}, "--adam-beta2: value 0.95 differs from the 0.99 that"},
      {{"--warmup-steps", "5"}, "--warmup-steps: value 5 differs from the 2 that"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> words{"--seq", "1024", "--resume", "ckpt"};
    words.insert(words.end(), c.flags.begin(), c.flags.end());
    auto o = parse(words);
    ASSERT_TRUE(o.ok()) << o.status().message();
    const auto notes = continue_settings(&*o, checkpoint(), false);
    ASSERT_FALSE(notes.ok()) << c.expected;
    EXPECT_NE(notes.status().message().find(c.expected), std::string::npos) << notes.status().message();
  }
  // The same values given again are no contradiction; a conversion compares nothing.
  auto same = parse({"--seq", "1024", "--resume", "ckpt", "--lr", "0.002", "--weight-decay-all", "--train-steps", "20",
                     "--warmup-steps", "2"});
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_TRUE(continue_settings(&*same, checkpoint(), false).ok());
  auto convert = parse({"--seq", "1024", "--resume", "ckpt", "--lr", "0.5", "--export-hf", "out"});
  ASSERT_TRUE(convert.ok());
  EXPECT_TRUE(continue_settings(&*convert, checkpoint(), true).ok());
}

// A first run without --train-steps spanned its --steps: --train-steps of that count agrees.
TEST(ResumeSettings, AHorizonFromStepsAgreesWithTheSameTrainSteps) {
  LoadedCheckpoint ck = checkpoint();
  ck.meta.settings->optimizer.train_steps = 0;
  ck.meta.settings->optimizer.warmup_steps = 0;
  auto o = parse({"--seq", "1024", "--resume", "ckpt", "--train-steps", "20", "--warmup-steps", "0"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(continue_settings(&*o, ck, false).ok());
}

TEST(ResumeSettings, AnotherSeqContinuesAtTheTokenOrIsRefusedWhenShuffled) {
  auto o = parse({"--seq", "2048", "--resume", "ckpt", "--data", "train.u16.bin"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  const auto notes = continue_settings(&*o, checkpoint(), false);
  ASSERT_TRUE(notes.ok()) << notes.status().message();
  EXPECT_EQ(*notes, "--seq 2048 after 1024: --data continues at token 3072 of the stream, where the checkpoint's "
                    "run stopped (windows of 2048 tokens from there)");
  auto synthetic = parse({"--seq", "2048", "--resume", "ckpt"});
  ASSERT_TRUE(synthetic.ok());
  EXPECT_EQ(*continue_settings(&*synthetic, checkpoint(), false),
            "--seq 2048 after 1024: synthetic data continues at sequence 3 (sequences of 2048 tokens from there)");
  auto shuffled = parse({"--seq", "2048", "--resume", "ckpt", "--data", "train.u16.bin", "--shuffle"});
  ASSERT_TRUE(shuffled.ok());
  const auto refused = continue_settings(&*shuffled, checkpoint(), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "--seq: value 2048 differs from the 1024 that ckpt/ckpt-000003 was trained at, "
                                        "with --shuffle (a shuffled pass is an order of 1024-token windows; allowed: 1024)");
}

TEST(ResumeSettings, StepsPastTheScheduleAreSaid) {
  auto o = parse({"--seq", "1024", "--resume", "ckpt", "--steps", "25"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*continue_settings(&*o, checkpoint(), false), "steps 21 to 25 run past the schedule's 20 steps, at min_lr 0");
}

// Checkpoints written before settings were stored resume with the command's settings, as before.
TEST(ResumeSettings, AnOldCheckpointKeepsTheCommandsSettings) {
  LoadedCheckpoint ck = checkpoint();
  ck.meta.settings.reset();
  auto o = parse({"--seq", "1024", "--resume", "ckpt", "--lr", "0.5", "--steps", "9"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(continue_settings(&*o, ck, false).ok());
  EXPECT_DOUBLE_EQ(o->plan.optimizer.lr, 0.5);
  EXPECT_EQ(o->steps, 9);
}

TEST(ResumeSettings, TheSettingsOfARunAreWhatItParsed) {
  auto o = parse({"--seq", "1024", "--lr", "0.003", "--lr-schedule", "linear", "--train-steps", "50", "--adam-eps",
                  "1e-6", "--weight-decay-all"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  const TrainingSettings t = settings_of(*o);
  EXPECT_DOUBLE_EQ(t.optimizer.lr, 0.003);
  EXPECT_EQ(t.optimizer.warmup_steps, 5);  // --train-steps' 10 % default
  EXPECT_EQ(t.schedule_steps, 50);
  EXPECT_DOUBLE_EQ(t.optimizer.adam_eps, 1e-6);
  EXPECT_TRUE(t.weight_decay_all);
  EXPECT_EQ(t.seq_len, 1024);
}

}  // namespace
}  // namespace spplan::engine
