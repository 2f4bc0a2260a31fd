// --precision bf16 (engine/precision.hpp): bf16 weights, activations and gradients, an fp32 master
// copy stepped by AdamW, Hugging Face's fp32 upcasts in RMSNorm and the loss. The losses follow the
// fp32 run to bf16 rounding, a resume is exact (the checkpoint holds the fp32 master), and memory
// meets the costmodel's bf16 terms.
#include <gtest/gtest.h>

#include <algorithm>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

std::vector<std::string> tiny(const std::string& precision, const std::string& steps,
                              std::initializer_list<std::string> more, const std::string& seq = "2048") {
  std::vector<std::string> a{"run",     "--model", "tiny-llama", "--seq", seq,        "--sp", "2", "--nproc", "2",
                             "--steps", steps,     "--seed",     "5",     "--precision", precision, "--json"};
  a.insert(a.end(), more);
  return a;
}

// bf16 rounds every activation to 8 bits of mantissa: the token-mean loss of 2K tokens moves by
// about 1e-4 relative (measured), well inside 2e-3.
TEST(EngineBf16, LossesFollowTheFp32Run) {
  const std::vector<std::vector<std::string>> knobs = {
      {"--act-ckpt", "full"},
      {"--zero", "3", "--act-ckpt", "offload", "--offload-optimizer", "cpu", "--offload-params", "cpu",
       "--reduce-bucket", "262144", "--tiled-mlp"}};
  for (const auto& k : knobs) {
    SCOPED_TRACE(k.front() + " " + k[1]);
    auto fp32 = tiny("fp32", "3", {}), bf16 = tiny("bf16", "3", {});
    fp32.insert(fp32.end(), k.begin(), k.end());
    bf16.insert(bf16.end(), k.begin(), k.end());
    const std::vector<double> a = losses_of(json_of(run_engine(fp32))), b = losses_of(json_of(run_engine(bf16)));
    ASSERT_EQ(a.size(), 3u);
    EXPECT_LE(max_rel_diff(a, b), 2e-3);
    EXPECT_GT(max_rel_diff(a, b), 0.0);  // it did run in bf16
  }
}

// The checkpoint holds the fp32 master, so two resumed steps repeat the uninterrupted run exactly.
TEST(EngineBf16, ResumeContinuesTheUninterruptedRun) {
  const std::vector<double> full = losses_of(json_of(run_engine(tiny("bf16", "4", {"--zero", "1"}))));
  ASSERT_EQ(full.size(), 4u);
  const std::string dir = fresh_dir("bf16_resume");
  ASSERT_EQ(run_engine(tiny("bf16", "2", {"--zero", "1", "--save", dir})).exit_code, 0);
  const std::vector<double> resumed = losses_of(json_of(run_engine(tiny("bf16", "4", {"--zero", "1", "--resume", dir}))));
  EXPECT_EQ(resumed, std::vector<double>(full.begin() + 2, full.end()));
}

// bf16 halves the weights and gradients and adds the fp32 master (12 B of optimizer state per
// owned parameter instead of 8); the peak meets the costmodel's bf16 prediction.
TEST(EngineBf16, MemoryMeetsTheBf16Prediction) {
  const nlohmann::json j = json_of(run_engine(tiny("bf16", "2", {"--act-ckpt", "full"}, "8192")));
  ASSERT_TRUE(j.is_object());
  const double params = j.at("num_params").get<double>();
  EXPECT_EQ(j.at("memory").at("params_bytes").get<double>(), 2 * params);
  EXPECT_EQ(j.at("memory").at("optimizer_bytes").get<double>(), 12 * params);
  const double predicted = j.at("predicted_peak_memory_bytes").get<double>();
  EXPECT_NEAR(j.at("peak_memory_bytes").get<double>(), predicted, 0.10 * predicted);
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Where this CPU emulates bf16 (engine/cpu_bf16.hpp measures it), a bf16 run says so once on
// stderr, however many ranks it has; where bf16 is native it says nothing; fp32 runs never probe.
TEST(EngineBf16, SaysOnceWhenThisCpuEmulatesBf16) {
  const std::string note = "bf16 is emulated on this CPU";
  const RunResult bf16 = run_engine(tiny("bf16", "1", {"--act-ckpt", "full"}));
  const nlohmann::json j = json_of(bf16);
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j.at("cpu_bf16_emulated").is_boolean()) << j.dump();
  EXPECT_EQ(count_of(bf16.err, note), j.at("cpu_bf16_emulated").get<bool>() ? 1u : 0u) << bf16.err;

  const RunResult fp32 = run_engine(tiny("fp32", "1", {"--act-ckpt", "full"}));
  EXPECT_TRUE(json_of(fp32).at("cpu_bf16_emulated").is_null());
  EXPECT_EQ(count_of(fp32.err, note), 0u);
}

}  // namespace
}  // namespace spplan::engine::testing
