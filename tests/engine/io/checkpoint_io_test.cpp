// Checkpoint files (engine/io/checkpoint_io.hpp): round trip, LATEST, checksums, refusal.
#include "engine/io/checkpoint_io.hpp"

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "engine/io/data.hpp"
#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

// Replaces the first `from` in the file at `path` with `to`; fails the test when absent.
void replace_in(const std::string& path, const std::string& from, const std::string& to) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " in " << text;
  std::ofstream(path, std::ios::trunc) << text.replace(at, from.size(), to);
}

TEST(EngineCheckpoint, Fnv1a64KnownValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
}

TEST(EngineCheckpoint, SaveLoadRoundTripKeepsTheNewestTwo) {
  const std::string dir = testing::fresh_dir("ckpt_io");
  const std::vector<float> a{1, 2, 3}, b{4, 5};
  CheckpointMeta meta{.step = 1, .next_sequence = 4, .seed = 9, .model = "m", .run = "r", .data = {}, .eos_id = {},
                      .settings = {}};
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}, {"b.f32", b.data(), 8}}).is_ok());
  meta.step = 2;
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}, {"b.f32", b.data(), 8}}).is_ok());
  meta.step = 3;
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}, {"b.f32", b.data(), 8}}).is_ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/ckpt-000001"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/ckpt-000002"));  // the fallback for a damaged newest one
  const auto loaded = load_checkpoint(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->meta.step, 3);
  EXPECT_EQ(loaded->meta.next_sequence, 4);
  EXPECT_EQ(loaded->blobs.at("b.f32"), std::string(reinterpret_cast<const char*>(b.data()), 8));
  EXPECT_TRUE(load_checkpoint(dir + "/ckpt-000003").ok());  // a folder itself works too
}

// Each way the newest checkpoint can be damaged on disk: refused, with the reason as a warning,
// and the previous one is loaded instead.
TEST(EngineCheckpoint, DamagedNewestFallsBackToThePrevious) {
  const std::vector<float> a{1, 2, 3};
  const struct {
    std::string name;
    std::function<void(const std::string& newest)> damage;
    std::string expected;  // in the warning
  } cases[] = {
      {"truncated blob", [](const std::string& d) { std::ofstream(d + "/a.f32", std::ios::binary) << "xy"; },
       "a.f32: size 2 bytes, the manifest says 12"},
      {"flipped byte",
       [](const std::string& d) { std::ofstream(d + "/a.f32", std::ios::binary).write("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12); },
       "a.f32: checksum fnv1a64"},
      {"truncated manifest",
       [](const std::string& d) { std::filesystem::resize_file(d + "/manifest.json", 10); },
       "manifest.json: not valid JSON (the checkpoint is corrupted)"},
      {"missing manifest", [](const std::string& d) { std::filesystem::remove(d + "/manifest.json"); },
       "manifest.json: missing (the checkpoint is incomplete)"},
      // Floats beyond int64_t where whole numbers belong: nlohmann's get<int64_t>() of them was an
      // undefined cast (UBSan: float-cast-overflow); refused as damage instead.
      {"step 1e28", [](const std::string& d) { replace_in(d + "/manifest.json", "\"step\": 2", "\"step\": 1e28"); },
       "manifest is missing step, next_sequence, seed or model (the checkpoint is corrupted)"},
      {"bytes -1e300", [](const std::string& d) { replace_in(d + "/manifest.json", "\"bytes\": 12", "\"bytes\": -1e300"); },
       "a.f32: size 12 bytes, the manifest says no whole number (the checkpoint is corrupted)"},
  };
  for (const auto& c : cases) {
    const std::string dir = testing::fresh_dir("ckpt_fallback");
    CheckpointMeta meta;
    meta.step = 1;
    ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}}).is_ok());
    meta.step = 2;
    ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}}).is_ok());
    c.damage(dir + "/ckpt-000002");
    const auto loaded = load_checkpoint(dir);
    ASSERT_TRUE(loaded.ok()) << c.name << ": " << loaded.status().message();
    EXPECT_EQ(loaded->meta.step, 1) << c.name;
    EXPECT_NE(loaded->warning.find(c.expected), std::string::npos) << c.name << ": " << loaded->warning;
    EXPECT_NE(loaded->warning.find("resuming from the previous checkpoint " + dir + "/ckpt-000001 (step 1)"),
              std::string::npos) << loaded->warning;
    // A folder named by hand is that checkpoint or nothing: no silent substitute.
    EXPECT_FALSE(load_checkpoint(dir + "/ckpt-000002").ok()) << c.name;
  }
}

// The disk fills during a save: the save fails naming the file, its partial folder is removed,
// and the previous checkpoint is untouched. A full disk is emulated with a file size limit
// (RLIMIT_FSIZE: writes past it fail with EFBIG, as they fail with ENOSPC on a full disk).
TEST(EngineCheckpoint, DiskFullDuringSaveKeepsThePreviousCheckpoint) {
  const std::string dir = testing::fresh_dir("ckpt_disk_full");
  const std::vector<float> small(4, 1.0f), large(4096, 2.0f);  // 16 bytes, 16 KiB
  CheckpointMeta meta;
  meta.step = 1;
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", small.data(), 16}}).is_ok());
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // else the kernel ends the process
  rlimit limited = old;
  limited.rlim_cur = 8192;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  meta.step = 2;
  const Status s = save_checkpoint(dir, meta, {{"a.f32", large.data(), large.size() * sizeof(float)}});
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("/a.f32: write failed (File too large)"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("--save: " + dir + "/.tmp-ckpt-000002-", 0), 0u) << s.message();
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().rfind(".tmp", 0), std::string::npos) << "left behind: " << entry.path();
  }
  const auto loaded = load_checkpoint(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->meta.step, 1);
  EXPECT_TRUE(loaded->warning.empty()) << loaded->warning;
}

TEST(EngineCheckpoint, TruncatedOrMissingBlobIsRefused) {
  const std::string dir = testing::fresh_dir("ckpt_trunc");
  const std::vector<float> a{1, 2, 3};
  CheckpointMeta meta;
  meta.step = 1;
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 12}}).is_ok());
  std::ofstream(dir + "/ckpt-000001/a.f32", std::ios::binary) << "xy";
  const auto truncated = load_checkpoint(dir);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("size 2 bytes, the manifest says 12"), std::string::npos);
  std::filesystem::remove(dir + "/ckpt-000001/a.f32");
  EXPECT_NE(load_checkpoint(dir).status().message().find("missing"), std::string::npos);
}

TEST(EngineCheckpoint, ResumeChecksModelAndSteps) {
  LoadedCheckpoint ck;
  ck.folder = "d";
  ck.meta.step = 4;
  ModelSpec m;
  ck.meta.model = model_fingerprint(m);
  EXPECT_TRUE(check_resume(ck, m, 5).is_ok());
  EXPECT_NE(check_resume(ck, m, 4).message().find("--steps: value 4 is not more than the 4 steps"), std::string::npos);
  m.hidden_size = 8;
  EXPECT_NE(check_resume(ck, m, 5).message().find("checkpoint of model"), std::string::npos);
}

// The data and --eos-id a run read are in the manifest; resume refuses others, naming both.
TEST(EngineCheckpoint, ResumeRefusesOtherDataOrEosId) {
  const std::string dir = testing::fresh_dir("ckpt_data");
  const std::vector<float> a{1, 2};
  CheckpointMeta meta{.step = 1, .next_sequence = 2, .seed = 0, .model = "m", .run = "r",
                      .data = "a.u16.bin 100 tokens 00ff", .eos_id = 2, .settings = {}};
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 8}}).is_ok());
  const auto ck = load_checkpoint(dir);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  EXPECT_EQ(ck->meta.data, "a.u16.bin 100 tokens 00ff");
  EXPECT_EQ(ck->meta.eos_id, 2);
  EXPECT_TRUE(check_resume_data(*ck, "a.u16.bin 100 tokens 00ff", 2).is_ok());
  EXPECT_EQ(check_resume_data(*ck, "a.u16.bin 100 tokens 00ff", kNoEos).message(),
            "--eos-id: value none differs from the 2 that " + ck->folder + " was trained with (allowed: --eos-id 2)");
  EXPECT_EQ(check_resume_data(*ck, "b.u16.bin 100 tokens 00ff", 2).message(),
            "--data: \"b.u16.bin 100 tokens 00ff\" differs from what " + ck->folder +
                " was trained on: \"a.u16.bin 100 tokens 00ff\" (allowed: the same files, in the same order)");
  // A checkpoint written before these were stored is not refused for lacking them.
  LoadedCheckpoint old;
  EXPECT_TRUE(check_resume_data(old, "anything", 5).is_ok());
}

// `--resume DIR --export-hf OUT` with no --steps converts: any step count passes.
TEST(EngineCheckpoint, ConvertOnlyAcceptsTheFinishedStep) {
  LoadedCheckpoint ck;
  ck.folder = "d";
  ck.meta.step = 4;
  ModelSpec m;
  ck.meta.model = model_fingerprint(m);
  EXPECT_FALSE(check_resume(ck, m, 4).is_ok());
  EXPECT_TRUE(check_resume(ck, m, 4, true).is_ok());
}

// The run's settings (optimizer, schedule) round-trip through the manifest exactly; a damaged settings key is
// one line naming it, and --resume-or-init tells a checkpoint folder from an empty one.
TEST(EngineCheckpoint, SettingsRoundTripAndADamagedOneIsNamed) {
  const std::string dir = testing::fresh_dir("ckpt_settings");
  const std::vector<float> a{1, 2};
  CheckpointMeta meta{.step = 3, .next_sequence = 6, .seed = 1, .model = "m", .run = "r", .data = {}, .eos_id = {},
                      .settings = TrainingSettings{}};
  meta.settings->optimizer.lr = 2e-5;
  meta.settings->optimizer.lr_schedule = LrSchedule::kCosine;
  meta.settings->optimizer.min_lr = 1e-7;
  meta.settings->optimizer.train_steps = 40;
  meta.settings->schedule_steps = 40;
  meta.settings->optimizer.adam_beta2 = 0.999;
  meta.settings->weight_decay_all = true;
  meta.settings->seq_len = 4096;
  meta.settings->next_token = 24576;
  ASSERT_TRUE(save_checkpoint(dir, meta, {{"a.f32", a.data(), 8}}).is_ok());
  const auto ck = load_checkpoint(dir);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  ASSERT_TRUE(ck->meta.settings.has_value());
  const TrainingSettings& t = *ck->meta.settings;
  EXPECT_EQ(t.optimizer.lr, 2e-5);  // exact: JSON keeps a double's 17 digits
  EXPECT_EQ(t.optimizer.lr_schedule, LrSchedule::kCosine);
  EXPECT_EQ(t.optimizer.min_lr, 1e-7);
  EXPECT_EQ(t.optimizer.train_steps, 40);
  EXPECT_EQ(t.optimizer.adam_beta2, 0.999);
  EXPECT_TRUE(t.weight_decay_all);
  EXPECT_EQ(t.seq_len, 4096);
  EXPECT_EQ(t.next_token, 24576);
  // A hand-edited manifest: the schedule's name no longer one of the three.
  const std::string manifest = ck->folder + "/manifest.json";
  std::ifstream in(manifest);
  nlohmann::json j = nlohmann::json::parse(in);
  j["settings"]["lr_schedule"] = "step";
  std::ofstream(manifest, std::ios::trunc) << j.dump();
  const auto bad = load_checkpoint(ck->folder);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--resume: " + manifest + ": key \"settings.lr_schedule\": missing or of the wrong "
                                    "type (the checkpoint is corrupted)");
  EXPECT_EQ(*holds_checkpoint(dir, "--resume-or-init"), true);
  EXPECT_EQ(*holds_checkpoint(dir + "/none", "--resume-or-init"), false);
  EXPECT_EQ(*holds_checkpoint(testing::fresh_dir("ckpt_empty"), "--resume-or-init"), false);
}

}  // namespace
}  // namespace spplan::engine
