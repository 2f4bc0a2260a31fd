// engine/run/predict.hpp: which spec prices a run. A GPU run is priced on the preset that matches its
// device (name and nvidia-smi memory), or on --gpu; the CPU keeps its calibrated or uncalibrated host.
#include "engine/run/predict.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "planner/config/loaders.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/host_cpu.hpp"

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
      {"NVIDIA H100 NVL", 95830, "h100-nvl-94gb"},     // an H100 with another memory: its own preset, not the SXM
      {"NVIDIA H100 64GB", 65536, ""},                 // an H100 whose memory no preset has
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

namespace spplan::engine {
namespace {

// A CPU spec as calibrate writes one (no CUDA context, no NCCL buffers), without thread keys.
GpuSpec cpu_spec(double bf16_tflops) {
  GpuSpec cpu;
  cpu.name = "cpu-host";
  cpu.bf16_tflops = bf16_tflops;
  cpu.fp32_tflops = 1.0;
  cpu.hbm_GBps = 40;
  cpu.pcie_GBps = 20;
  cpu.memory_gib = 24;
  cpu.cuda_context_gib = cpu.nccl_gib_per_group = 0;
  return cpu;
}

// One CPU price, not two: the engine prices its run with the rule `spplan plan` and `estimate`
// use (costmodel/host_cpu.hpp as_priced): a calibrated CPU spec is divided between the ranks at the
// threads each runs, so the run's prediction is the planner's for the same plan; a GPU preset a
// CPU run is compared with is not divided.
TEST(HostShare, TheRunIsPricedAsThePlannerPricesTheSamePlan) {
  GpuSpec cpu = cpu_spec(2.0);
  cpu.host_threads = 2;
  cpu.matmul_thread_speedup = 1.68;
  cpu.gpus_per_node = 2;  // what calibrate writes: the host's threads
  cpu.intra_node_GBps = cpu.inter_node_GBps = 5;  // its Gloo all-to-all
  PlanSpec plan;
  plan.model = *load_model("tiny-llama");
  plan.seq_len = 1024;
  plan.knobs.sp = 2;
  plan.knobs.precision = Precision::kFp32;
  plan.cluster.num_gpus = 2;
  plan.cluster.gpu = cpu;
  plan.stack = trainer_stack("engine");
  const Prediction run = predict(plan, Pricing{cpu, true, 1});  // 2 ranks of 1 thread on 2 threads
  const costmodel::Estimate planned = costmodel::estimate(plan);  // spplan plan / estimate
  ASSERT_TRUE(run.step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*run.step_time_s, planned.time.step_time_s);
  const PlanSpec priced = priced_plan(plan, Pricing{cpu, true, 1});
  EXPECT_DOUBLE_EQ(priced.cluster.gpu.hbm_GBps, 20);  // half the bandwidth each
  EXPECT_DOUBLE_EQ(costmodel::as_priced(priced).cluster.gpu.hbm_GBps, 20);  // and only once
  const auto h100 = load_gpu("h100-80gb");
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(priced_plan(plan, Pricing{*h100, true, 1}).cluster.gpu.bf16_tflops, h100->bf16_tflops);
  EXPECT_DOUBLE_EQ(cpu_pricing(&cpu, cpu).gpu.bf16_tflops, 2.0);  // the spec itself: shared when priced
}

// OMP_NUM_THREADS set (restored after the test), or unset.
class OmpThreads {
 public:
  explicit OmpThreads(const char* value) {
    if (const char* old = std::getenv("OMP_NUM_THREADS"); old != nullptr) old_ = old;
    if (value != nullptr) {
      ::setenv("OMP_NUM_THREADS", value, 1);
    } else {
      ::unsetenv("OMP_NUM_THREADS");
    }
  }
  ~OmpThreads() {
    if (old_) {
      ::setenv("OMP_NUM_THREADS", old_->c_str(), 1);
    } else {
      ::unsetenv("OMP_NUM_THREADS");
    }
  }

 private:
  std::optional<std::string> old_;
};

// The threads a rank runs, as worker.cpp sets them: OMP_NUM_THREADS when it is a positive count,
// else the host's threads split between the ranks (at least 1). The prediction prices LibTorch's
// CPU flash kernel with them: its backward's block buffers are allocated per thread.
TEST(ThreadsPerRank, OmpNumThreadsWinsElseTheCoresSplitBetweenTheRanks) {
  {
    OmpThreads omp("3");
    EXPECT_EQ(threads_per_rank(1), 3);
    EXPECT_EQ(threads_per_rank(64), 3);
  }
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  for (const char* value : {static_cast<const char*>(nullptr), "0", "two", "4x"}) {
    OmpThreads omp(value);
    EXPECT_EQ(threads_per_rank(1), cores) << (value ? value : "unset");
    EXPECT_EQ(threads_per_rank(1 << 20), 1) << (value ? value : "unset");
  }
  OmpThreads omp("2");
  const PlanSpec cpu = priced_plan(PlanSpec{}, Pricing{cpu_spec(1.0), true});
  EXPECT_TRUE(cpu.stack.cpu_flash_attention);
  EXPECT_EQ(cpu.stack.cpu_flash_threads, 2);
  const auto h100 = load_gpu("h100-80gb");
  ASSERT_TRUE(h100.ok());
  EXPECT_FALSE(priced_plan(PlanSpec{}, Pricing{*h100, true}).stack.cpu_flash_attention);
}

// --tiled-loss brings the fused CUDA layer kernels on a GPU; on this CPU the blockwise ATen
// references run, priced as the eager chain (fused_reference.cpp).
TEST(PricedPlan, FusedLayerKernelsOnAGpuOnly) {
  const auto h100 = load_gpu("h100-80gb");
  ASSERT_TRUE(h100.ok());
  EXPECT_TRUE(priced_plan(PlanSpec{}, Pricing{*h100, true}).stack.fused_layer_kernels_with_tiled_loss);
  EXPECT_FALSE(priced_plan(PlanSpec{}, Pricing{cpu_spec(1.0), true}).stack.fused_layer_kernels_with_tiled_loss);
  // Likewise LibTorch's fp32 rms_norm: fused on a GPU, the composite on a CPU.
  EXPECT_TRUE(priced_plan(PlanSpec{}, Pricing{*h100, true}).stack.fp32_norms_fused_on_gpu);
  EXPECT_FALSE(priced_plan(PlanSpec{}, Pricing{cpu_spec(1.0), true}).stack.fp32_norms_fused_on_gpu);
}

// calibrate's layer probe divides the elementwise class's measured seconds by elementwise_work's
// bytes: they must be the bytes the class is priced by (time = bytes / bandwidth + launches x cost).
TEST(ElementwiseWork, IsTheWorkTheElementwiseClassIsPricedBy) {
  PlanSpec plan;
  auto model = load_model("tiny-llama");
  ASSERT_TRUE(model.ok()) << model.status().message();
  plan.model = *model;
  plan.seq_len = 4096;
  plan.cluster.num_gpus = 1;
  plan.knobs.sp = 1;
  plan.knobs.zero_stage = 0;
  plan.knobs.act_ckpt = ActCkpt::kNone;
  plan.knobs.precision = Precision::kFp32;
  GpuSpec& g = plan.cluster.gpu;
  g.name = "cpu-host";
  g.bf16_tflops = g.fp32_tflops = 0.05;
  g.hbm_GBps = 40, g.elementwise_efficiency = 0.25, g.kernel_launch_s = 2e-6;
  g.intra_node_GBps = g.inter_node_GBps = g.pcie_GBps = 1;
  g.memory_gib = g.host_memory_gib_per_node = 16;
  const std::optional<ElementwiseWork> w = elementwise_work(plan);
  if (!w) GTEST_SKIP() << "built without the costmodel";
  ASSERT_GT(w->bytes, 0);
  ASSERT_GT(w->kernels, 0);
  const Prediction p = predict(plan, Pricing{g, true});
  ASSERT_TRUE(p.kernel_classes_s.count("elementwise"));
  EXPECT_NEAR(p.kernel_classes_s.at("elementwise"), w->bytes / (40e9 * 0.25) + w->kernels * 2e-6,
              1e-9 * p.kernel_classes_s.at("elementwise"));
  // Every term is per token or per launch: twice the tokens, twice the bytes, the same launches.
  plan.seq_len = 8192;
  const std::optional<ElementwiseWork> w2 = elementwise_work(plan);
  ASSERT_TRUE(w2);
  EXPECT_NEAR(w2->bytes, 2 * w->bytes, 1e-9 * w2->bytes);
  EXPECT_DOUBLE_EQ(w2->kernels, w->kernels);
}

}  // namespace
}  // namespace spplan::engine
