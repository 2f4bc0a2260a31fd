// The same bounds in files as in flags: for each numeric setting a flag and a file both give, the
// values just outside its range are refused by the flag and by the file, each in one line naming
// its source and with the same "allowed" words (a plan's lr = 5 was read where --lr allows (0, 1];
// a GPU file's price and the price flags disagreed about 0).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/renter_settings.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

const std::string kPlan =
    "seq_len = 4096\n[model]\npreset = \"tiny-llama\"\n[gpu]\npreset = \"h100-80gb\"\n[cluster]\nnum_gpus = 2\n"
    "[knobs]\nsp = 2\nzero_stage = 1\n";
const std::string kGpu =
    "memory_gib = 80\nbf16_tflops = 989\nhbm_GBps = 3350\ngpus_per_node = 8\nintra_node_GBps = 450\n"
    "inter_node_GBps = 50\npcie_GBps = 55\nhost_memory_gib_per_node = 2048\nhost_adam_params_per_s = 1e9\n"
    "nvme_GBps_per_node = 10\n";

std::string write(const std::string& name, const std::string& text) {
  static const testing_scratch::ScratchDir dir("setting_ranges");
  std::ofstream(dir.path() + "/" + name) << text;
  return dir.path() + "/" + name;
}

// Where a setting comes from in a file: a plan's [knobs] or [optimizer] (a key written there
// replaces the one above), or a GPU file's top level.
enum class File { kKnobs, kOptimizer, kGpu };

Status load_with(File file, const std::string& key, const std::string& value) {
  const std::string line = key + " = " + value + "\n";
  switch (file) {
    case File::kKnobs: {
      std::string plan = kPlan;
      if (const size_t at = plan.find("\n" + key + " = "); at != std::string::npos) {
        plan.erase(at + 1, plan.find('\n', at + 1) - at);
      }
      return load_plan(write("p.toml", plan + line)).status();
    }
    case File::kOptimizer: return load_plan(write("p.toml", kPlan + "[optimizer]\n" + line)).status();
    case File::kGpu: return load_gpu(write("g.toml", kGpu + (key == "price_per_gpu_hour" ? "" : "price_per_gpu_hour = 2\n") + line)).status();
  }
  return Status::ok();
}

// A flag given alone, through the parser its commands call.
Status apply_flag(const std::string& flag, const std::string& value) {
  std::vector<FlagSpec> specs = knob_flag_specs();
  for (const FlagSpec& f : optimizer_flag_specs()) specs.push_back(f);
  if (flag == "price-per-gpu-hour" || flag == "price-per-node-hour") {
    GpuSpec gpu;
    return flag == "price-per-gpu-hour" ? apply_price(value, std::nullopt, &gpu) : apply_price(std::nullopt, value, &gpu);
  }
  const auto args = Args::parse(std::vector<std::string>{"--" + flag, value}, specs);
  if (!args.ok()) return args.status();
  Knobs knobs;
  OptimizerSpec optimizer;
  if (Status s = apply_knob_flags(*args, &knobs); !s) return s;
  return apply_optimizer_flags(*args, &optimizer);
}

std::string allowed_part(const std::string& message) {
  const size_t at = message.find("(allowed: ");
  return at == std::string::npos ? "(no allowed part: " + message + ")" : message.substr(at);
}

struct Setting {
  std::string flag;
  File file;
  std::string key;
  std::vector<std::string> refused;  // just below the range, just above it
  std::string taken;                 // inside it, from both
};

std::string text_of(double value) { return format_number(value); }
std::string text_of(int64_t value) { return std::to_string(value); }

// Just outside each range, read off the range itself so that a range changed in one place is
// checked where it changed.
std::vector<std::string> outside(IntRange r) { return {text_of(r.min - 1), text_of(r.max + 1)}; }
std::vector<std::string> outside(NumberRange r, double below, double above) {
  EXPECT_LT(below, r.min);
  EXPECT_GT(above, r.max);
  return {text_of(below), text_of(above)};
}

std::vector<Setting> settings() {
  const KnobRanges& k = kKnobRanges;
  const OptimizerRanges& o = kOptimizerRanges;
  const RenterRanges& p = kRenterRanges;
  return {
      {"sp", File::kKnobs, "sp", outside(k.sp), "2"},
      {"cp", File::kKnobs, "cp", outside(k.cp), "1"},
      {"zero", File::kKnobs, "zero_stage", outside(k.zero_stage), "3"},
      {"micro-batch", File::kKnobs, "micro_batch", outside(k.micro_batch), "2"},
      {"grad-accum", File::kKnobs, "grad_accum_steps", outside(k.grad_accum_steps), "1048576"},
      {"reduce-bucket", File::kKnobs, "reduce_bucket_elems", outside(k.reduce_bucket_elems, 0.5, 2e15), "5e8"},
      {"prefetch-bucket", File::kKnobs, "prefetch_bucket_elems", outside(k.prefetch_bucket_elems, -1, 2e15), "0"},
      {"lr", File::kOptimizer, "lr", outside(o.lr, 0, 5), "1"},
      {"warmup-steps", File::kOptimizer, "warmup_steps", outside(o.warmup_steps), "0"},
      {"min-lr", File::kOptimizer, "min_lr", outside(o.min_lr, -0.5, 2), "0"},
      {"weight-decay", File::kOptimizer, "weight_decay", outside(o.weight_decay, -0.5, 2), "1"},
      {"grad-clip", File::kOptimizer, "grad_clip", outside(o.grad_clip, -1, 2e15), "0"},
      {"train-steps", File::kOptimizer, "train_steps", outside(o.train_steps), "0"},
      {"adam-beta1", File::kOptimizer, "adam_beta1", outside(o.adam_beta, -0.5, 1), "0"},
      {"adam-beta2", File::kOptimizer, "adam_beta2", outside(o.adam_beta, -0.5, 1), "0.999"},
      {"adam-eps", File::kOptimizer, "adam_eps", outside(o.adam_eps, 1e-21, 0.1), "1e-8"},
      {"price-per-gpu-hour", File::kGpu, "price_per_gpu_hour", outside(p.price_per_hour, -0.5, 2e15), "0"},
  };
}

TEST(SettingRanges, TheFlagAndTheFileRefuseTheSameValuesInTheSameWords) {
  for (const Setting& s : settings()) {
    for (const std::string& value : s.refused) {
      const Status flag = apply_flag(s.flag, value), file = load_with(s.file, s.key, value);
      ASSERT_FALSE(flag.is_ok()) << "--" << s.flag << " " << value;
      ASSERT_FALSE(file.is_ok()) << s.key << " = " << value;
      EXPECT_EQ(flag.message().rfind("--" + s.flag + ": value \"" + value + "\" is not allowed", 0), 0u) << flag.message();
      const std::string key = (s.file == File::kKnobs ? "knobs." : s.file == File::kOptimizer ? "optimizer." : "") + s.key;
      EXPECT_NE(file.message().find(": key \"" + key + "\": value "), std::string::npos) << file.message();
      EXPECT_EQ(allowed_part(file.message()), allowed_part(flag.message())) << s.key << " = " << value;
      EXPECT_EQ(file.message().find('\n'), std::string::npos) << file.message();
    }
  }
}

TEST(SettingRanges, TheFlagAndTheFileTakeTheSameValues) {
  for (const Setting& s : settings()) {
    EXPECT_TRUE(apply_flag(s.flag, s.taken).is_ok()) << "--" << s.flag << " " << s.taken << ": "
                                                     << apply_flag(s.flag, s.taken).message();
    const Status file = load_with(s.file, s.key, s.taken);
    EXPECT_TRUE(file.is_ok()) << s.key << " = " << s.taken << ": " << file.message();
  }
}

// The cases named when the ranges disagreed: a plan's lr = 5 is refused as --lr 5 is; a price of 0
// (what `spplan calibrate` writes for the machine it measured) is taken by the flags as by a file.
TEST(SettingRanges, APlansLearningRateAboveOneIsRefused) {
  const Status s = load_with(File::kOptimizer, "lr", "5");
  EXPECT_NE(s.message().find("p.toml: key \"optimizer.lr\": value 5 is not allowed (allowed: a number from 1e-15 to 1)"),
            std::string::npos)
      << s.message();
  GpuSpec gpu;
  gpu.price_per_gpu_hour = 3;
  ASSERT_TRUE(apply_price(std::string("0"), std::nullopt, &gpu).is_ok());
  EXPECT_EQ(gpu.price_per_gpu_hour, 0.0);
}

}  // namespace
}  // namespace spplan
