// engine/run/predict.hpp: which spec prices a run. A GPU run is priced on the preset that matches its
// device (name and nvidia-smi memory), or on --gpu; the CPU keeps its calibrated or uncalibrated host.
#include "engine/run/predict.hpp"

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"

namespace spplan::engine {
namespace {

constexpr int64_t kMiB = 1 << 20;

std::vector<GpuSpec> presets() {
  std::vector<GpuSpec> out;
  for (const std::string& name : gpu_presets()) {
    if (auto g = load_gpu(name); g.ok()) out.push_back(*g);
  }
  return out;
}

TEST(MatchGpuPreset, ByModelNameAndMemory) {
  struct Row {
    const char* device;
    int64_t mib;
    const char* preset;  // "" = none
  };
  const Row rows[] = {
      {"NVIDIA H100 80GB HBM3", 81559, "h100-80gb"},   // BUILD-NOTES.md section 9
      {"NVIDIA H200", 143771, "h200-141gb"},
      {"NVIDIA A100-SXM4-40GB", 40536, "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", 81251, "a100-80gb"},   // an 80 GB part that is no H100
      {"NVIDIA H100 NVL", 95830, ""},                  // an H100 with another memory: not the SXM preset
      {"NVIDIA GeForce RTX 4090", 24564, ""},
  };
  const std::vector<GpuSpec> all = presets();
  for (const Row& r : rows) {
    const auto g = match_gpu_preset({r.device, r.mib * kMiB}, all);
    EXPECT_EQ(g ? g->name : std::string(), r.preset) << r.device;
  }
}

TEST(CudaPricing, FlagThenMatchThenMemoryOnly) {
  const GpuSpec h100 = *load_gpu("h100-80gb"), h200 = *load_gpu("h200-141gb");
  const Pricing matched = cuda_pricing(nullptr, {"NVIDIA H100 80GB HBM3", 81559 * kMiB}, h200);
  EXPECT_EQ(matched.gpu.name, "h100-80gb");
  EXPECT_TRUE(matched.speed_known);
  EXPECT_GT(matched.gpu.cuda_context_gib, 0);  // every overhead term stays on a GPU

  const Pricing flagged = cuda_pricing(&h200, {"NVIDIA H100 80GB HBM3", 81559 * kMiB}, h100);
  EXPECT_EQ(flagged.gpu.name, "h200-141gb");

  const Pricing unknown = cuda_pricing(nullptr, {"NVIDIA GeForce RTX 4090", 24564 * kMiB}, h100);
  EXPECT_FALSE(unknown.speed_known);
  EXPECT_NEAR(unknown.gpu.memory_gib, 24564.0 / 1024, 1e-9);
  EXPECT_NE(unknown.gpu.name.find("RTX 4090 (no preset matches: memory only)"), std::string::npos);
  EXPECT_EQ(unknown.gpu.cuda_context_gib, h100.cuda_context_gib);
}

}  // namespace
}  // namespace spplan::engine
