// Whole numbers and paths in every config reader (found by fuzzing): a float where a whole number belongs
// (1e28, 131e072), NaN, infinities, negative zero and over-long or looping paths are bad input with
// one line, and never converted out of range (UBSan's float-cast-overflow, before the fix).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "planner/config/loaders.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

namespace fs = std::filesystem;

const std::string kModel =
    "num_hidden_layers = 2\nhidden_size = 64\nnum_attention_heads = 4\nnum_key_value_heads = 2\n"
    "intermediate_size = 128\nvocab_size = 100\n";
const std::string kPlan =
    "seq_len = 4096\n[model]\npreset = \"tiny-llama\"\n[gpu]\npreset = \"h100-80gb\"\n[cluster]\nnum_gpus = 2\n"
    "[knobs]\nsp = 2\nzero_stage = 1\n";

// Writes `text` under a per-process scratch folder and returns its path.
std::string write(const std::string& name, const std::string& text) {
  static const testing_scratch::ScratchDir dir("numbers");
  std::ofstream(dir.path() + "/" + name) << text;
  return dir.path() + "/" + name;
}

// `text` with the line starting `key =` replaced by `key = value`.
std::string with(std::string text, const std::string& key, const std::string& value) {
  const size_t at = text.find(key + " = ");
  const size_t end = text.find('\n', at);
  return text.replace(at, end - at, key + " = " + value);
}

const std::string kWhole = " is not allowed (allowed: a whole number from ";

TEST(TomlWholeNumbers, FloatsNanInfinitiesAndNegativeZeroAreRefused) {
  const struct {
    std::string value, shown;
  } cases[] = {
      {"1e28", "1e+28"}, {"131e072", "1.31e+74"}, {"-1e28", "-1e+28"}, {"4.0", "4.0"}, {"nan", "nan"},
      {"inf", "inf"},    {"-inf", "-inf"},        {"-0.0", "-0.0"},
  };
  for (const auto& c : cases) {
    const auto m = load_model(write("m.toml", with(kModel, "intermediate_size", c.value)));
    ASSERT_FALSE(m.ok()) << c.value;
    EXPECT_NE(m.status().message().find("m.toml: key \"intermediate_size\": value " + c.shown + kWhole),
              std::string::npos)
        << m.status().message();
    const auto p = load_plan(write("p.toml", with(kPlan, "seq_len", c.value)));
    ASSERT_FALSE(p.ok()) << c.value;
    EXPECT_NE(p.status().message().find("p.toml: key \"seq_len\": value " + c.shown + kWhole), std::string::npos)
        << p.status().message();
  }
  // Integer negative zero is zero: refused here by the range, not by a conversion.
  const auto zero = load_plan(write("p.toml", with(kPlan, "seq_len", "-0")));
  EXPECT_EQ(zero.status().message().substr(zero.status().message().find("key")),
            "key \"seq_len\": value 0 is not allowed (allowed: a whole number from 1 to 1000000000000)");
}

TEST(TomlWholeNumbers, EveryIntegerKeyOfAPlanIsChecked) {
  for (const std::string key : {"sp", "zero_stage"}) {
    const auto p = load_plan(write("p.toml", with(kPlan, key, "1e28")));
    ASSERT_FALSE(p.ok()) << key;
    EXPECT_NE(p.status().message().find("key \"knobs." + key + "\": value 1e+28" + kWhole), std::string::npos)
        << p.status().message();
  }
  const auto batch = load_plan(write("p.toml", kPlan + "micro_batch = nan\n"));
  EXPECT_NE(batch.status().message().find("key \"knobs.micro_batch\": value nan" + kWhole), std::string::npos)
      << batch.status().message();
}

TEST(TomlNumbers, NanAndInfinityAreRefusedWhereANumberBelongs) {
  const std::string gpu = "memory_gib = 80\nbf16_tflops = 989\nhbm_GBps = 3350\ngpus_per_node = 8\n"
                          "intra_node_GBps = 450\ninter_node_GBps = 50\npcie_GBps = 55\n"
                          "host_memory_gib_per_node = 2048\nhost_adam_params_per_s = 1e9\nnvme_GBps_per_node = 10\n"
                          "price_per_gpu_hour = 2.5\n";
  for (const std::string value : {"nan", "inf", "-inf"}) {
    const auto g = load_gpu(write("g.toml", with(gpu, "memory_gib", value)));
    ASSERT_FALSE(g.ok()) << value;
    EXPECT_NE(g.status().message().find("g.toml: key \"memory_gib\": value " + value +
                                        " is not allowed (allowed: a number from 1e-15 to 1e+15)"),
              std::string::npos)
        << g.status().message();
  }
  // Negative zero is zero: a price of -0.0 is a free GPU, inside [0, 1e15].
  const auto free_gpu = load_gpu(write("g.toml", with(gpu, "price_per_gpu_hour", "-0.0")));
  ASSERT_TRUE(free_gpu.ok()) << free_gpu.status().message();
  EXPECT_EQ(free_gpu->price_per_gpu_hour, 0.0);
  // The integer key of a GPU file: a float beyond int64_t is refused, not converted.
  const auto g = load_gpu(write("g.toml", with(gpu, "gpus_per_node", "1e28")));
  EXPECT_NE(g.status().message().find("key \"gpus_per_node\": value 1e+28" + kWhole), std::string::npos)
      << g.status().message();
}

TEST(JsonWholeNumbers, FloatsAndValuesBeyondInt64AreRefused) {
  const std::string config = R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100})";
  const struct {
    std::string value, shown;
  } cases[] = {
      {"1e28", "1e+28"},
      {"18446744073709551615", "18446744073709551615"},  // 2^64 - 1: wrapped to -1 before
      {"9223372036854775808", "9223372036854775808"},    // 2^63
      {"-0.0", "-0.0"},
      {"-0", "0"},
      {"128.0", "128.0"},
  };
  for (const auto& c : cases) {
    std::string text = config;
    text.replace(text.find("128"), 3, c.value);
    const auto m = load_model(write("config.json", text));
    ASSERT_FALSE(m.ok()) << c.value;
    EXPECT_NE(m.status().message().find("config.json: key \"intermediate_size\": value " + c.shown + kWhole),
              std::string::npos)
        << m.status().message();
  }
}

// The expert count of a mixture of experts, beyond int64_t: refused as out of range, not wrapped to
// -1 and priced as a dense model.
TEST(JsonWholeNumbers, ExpertCountBeyondInt64IsRefused) {
  const auto m = load_model(write("config.json", R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
    "num_local_experts": 18446744073709551615})"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("config.json: key \"num_local_experts\": value 18446744073709551615 is not "
                                      "allowed (allowed: a whole number from 1 to 1048576)"),
            std::string::npos)
      << m.status().message();
}

// A preset name with a newline (a TOML "\n" escape) is shown escaped: the message stays one line
// (found by scripts/fuzz.sh on plan_toml).
TEST(ConfigPaths, PresetNameWithANewlineIsOneLine) {
  std::string plan = kPlan;
  plan.replace(plan.find("\"tiny-llama\""), 12, "\"tiny\\nllama\"");
  const auto p = load_plan(write("p.toml", plan));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message().find('\n'), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("key \"model.preset\": value \"tiny\\x0allama\" is not a preset or a file"),
            std::string::npos)
      << p.status().message();
}

// Where a user's string becomes a path: a name too long, a link loop, a folder; one line each.
TEST(ConfigPaths, UnusablePathsAreOneLine) {
  const std::string dir = testing::TempDir() + "/numbers_paths." + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/folder.toml");
  fs::create_symlink("b.toml", dir + "/a.toml");
  fs::create_symlink("a.toml", dir + "/b.toml");
  const std::string long_name(300, 'x');
  // A model may be a Hugging Face model folder: a folder is refused for the config.json it lacks.
  const std::string no_config = dir + "/folder.toml: a folder without config.json (allowed: " + kModelAllowed + ")";
  const struct {
    std::string arg, expected, model_expected;
  } cases[] = {
      {long_name + ".toml", long_name + ".toml: cannot open (File name too long)", ""},
      {dir + "/a.toml", dir + "/a.toml: cannot open (Too many levels of symbolic links)", ""},
      {dir + "/folder.toml", dir + "/folder.toml: cannot open (a directory; allowed: a file)", "--model: " + no_config},
      {dir + "/" + long_name + "/config.json", dir + "/" + long_name + "/config.json: cannot open (File name too long)", ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(load_model(c.arg).status().message(), c.model_expected.empty() ? c.expected : c.model_expected);
    for (const auto& status : {load_gpu(c.arg).status(), load_plan(c.arg).status()}) {
      EXPECT_EQ(status.message(), c.expected);
    }
  }
  // A preset name too long to be a file name is simply not a preset (it threw before).
  const auto preset = load_model(long_name);
  EXPECT_EQ(preset.status().message().rfind("--model: value \"" + long_name + "\" is not a preset or a file", 0), 0u)
      << preset.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace spplan
