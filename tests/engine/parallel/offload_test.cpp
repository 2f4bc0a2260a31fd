// Offload (engine/parallel/offload.hpp): optimizer state, ZeRO-3 parameter shards and activation
// checkpoints on the host. The math does not change (every value makes a round trip through an
// exact copy), so the losses equal the run without offload; the memory moves from the device
// tallies to the host tallies, as the costmodel predicts.
#include <gtest/gtest.h>

#include <algorithm>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

// --reduce-bucket at the engine's per-unit size, where the costmodel's bucket and the engine's agree
// (engine/README.md).
std::vector<std::string> tiny(std::initializer_list<std::string> more, const std::string& seq = "2048") {
  std::vector<std::string> a{"run",     "--model", "tiny-llama", "--seq", seq,    "--sp", "2", "--nproc", "2",
                             "--steps", "3",       "--seed",     "11",    "--reduce-bucket", "262144", "--json"};
  a.insert(a.end(), more);
  return a;
}

double bytes(const nlohmann::json& j, const char* key) { return j.at(key).get<double>(); }

// Each offloaded run against the same run on the device: the same losses, bit for bit.
TEST(EngineOffload, OffloadedRunsTrainExactlyLikeTheDeviceRuns) {
  struct Pair {
    std::vector<std::string> device, offloaded;
  };
  const std::vector<Pair> pairs = {
      {tiny({"--zero", "1", "--act-ckpt", "full"}),
       tiny({"--zero", "1", "--act-ckpt", "full", "--offload-optimizer", "cpu"})},
      {tiny({"--zero", "2", "--act-ckpt", "none"}),
       tiny({"--zero", "2", "--act-ckpt", "none", "--offload-optimizer", "cpu"})},
      {tiny({"--zero", "0", "--act-ckpt", "full"}), tiny({"--zero", "0", "--act-ckpt", "offload"})},
      {tiny({"--zero", "3", "--act-ckpt", "full"}),
       tiny({"--zero", "3", "--act-ckpt", "offload", "--offload-optimizer", "cpu", "--offload-params", "cpu"})},
  };
  for (const Pair& p : pairs) {
    SCOPED_TRACE(p.offloaded.back());
    const std::vector<double> device = losses_of(json_of(run_engine(p.device)));
    const std::vector<double> offloaded = losses_of(json_of(run_engine(p.offloaded)));
    ASSERT_EQ(device.size(), 3u);
    EXPECT_EQ(offloaded, device);
  }
}

// A checkpoint written with everything offloaded resumes exactly: the saved moments and parameters
// come from the host tensors, and the host master copy restarts from the restored parameters (two
// resumed steps: the second loss sees the first resumed update, which starts from the master).
TEST(EngineOffload, ResumeContinuesTheUninterruptedRun) {
  auto offloaded = [](const std::string& steps, std::initializer_list<std::string> more) {
    auto a = tiny({"--zero", "3", "--act-ckpt", "offload", "--offload-optimizer", "cpu", "--offload-params", "cpu"});
    *(std::find(a.begin(), a.end(), "--steps") + 1) = steps;
    a.insert(a.end(), more);
    return a;
  };
  const std::vector<double> full = losses_of(json_of(run_engine(offloaded("4", {}))));
  ASSERT_EQ(full.size(), 4u);
  const std::string dir = fresh_dir("offload_resume");
  ASSERT_EQ(run_engine(offloaded("2", {"--save", dir})).exit_code, 0);
  const std::vector<double> resumed = losses_of(json_of(run_engine(offloaded("4", {"--resume", dir}))));
  EXPECT_EQ(resumed, std::vector<double>(full.begin() + 2, full.end()));
}

// ZeRO-3 with everything offloaded: the optimizer state and the parameter shards leave the device,
// the checkpoints too; the host holds what the costmodel says a rank's share of the node holds.
// At 4K tokens, between validate engine's quick (2K) and full (16K) offload cases: the checkpoints
// are priced in the host bytes checked here, and the two runs take 25 s (70 s at 8K).
TEST(EngineOffload, StateMovesToTheHostAsPredicted) {
  const nlohmann::json device = json_of(run_engine(tiny({"--zero", "3", "--act-ckpt", "full"}, "4096")));
  const nlohmann::json host = json_of(run_engine(
      tiny({"--zero", "3", "--act-ckpt", "offload", "--offload-optimizer", "cpu", "--offload-params", "cpu"}, "4096")));
  ASSERT_TRUE(device.is_object() && host.is_object());
  EXPECT_EQ(bytes(device, "peak_host_memory_bytes"), 0.0);
  EXPECT_EQ(bytes(host.at("memory"), "optimizer_bytes"), 0.0);
  EXPECT_EQ(bytes(host.at("memory"), "grads_bytes"), 0.0);
  // AdamW moments alone are 8 B per owned parameter: the device peak drops by at least that.
  const double owned = bytes(device, "num_params") / 2;
  EXPECT_LT(bytes(host, "peak_memory_bytes"), bytes(device, "peak_memory_bytes") - 8 * owned);
  // Host: fp32 master, fp32 grads, moments and the grad partition (20 B), the parameter shard
  // (4 B) per owned parameter, and every layer's checkpoint.
  const double measured = bytes(host, "peak_host_memory_bytes"), predicted = bytes(host, "predicted_host_memory_bytes");
  EXPECT_GT(measured, 24 * owned);
  EXPECT_NEAR(measured, predicted, 0.05 * predicted);
  EXPECT_NEAR(bytes(host, "peak_memory_bytes"), bytes(host, "predicted_peak_memory_bytes"),
              0.10 * bytes(host, "predicted_peak_memory_bytes"));
}

}  // namespace
}  // namespace spplan::engine::testing
