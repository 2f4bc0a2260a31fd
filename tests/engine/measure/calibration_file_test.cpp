// engine/measure/calibration_file.hpp: the measured fits become a GPU TOML that load_gpu reads back, every
// measured key with its measurement beside it.
#include "engine/measure/calibration_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "planner/config/loaders.hpp"

namespace spplan::engine {
namespace {

KernelFit line(double fixed_s, double rate, int64_t points = 6) { return {fixed_s, rate, 0.02, points, false}; }

// What load_gpu reads back from a calibration file's `text`, written to a file of this process's own.
Result<GpuSpec> load_written(const std::string& text) {
  const std::string path = "/tmp/spplan-calibration-file-test-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << text;
  auto g = load_gpu(path);
  std::remove(path.c_str());
  return g;
}

// An H100 as the kernel measurements describe it (gpu_h100_kernels.jsonl): bf16 GEMMs
// ~700 TFLOP/s, cuDNN attention 500 forward, 400 backward, elementwise 2.7 TB/s, PCIe 50 GB/s.
Calibration h100_calibration() {
  Calibration c;
  c.base = *load_gpu("h100-80gb");
  c.base_from = "preset h100-80gb";
  c.device = "NVIDIA H100 80GB HBM3";
  c.name = "h100-80gb-measured";
  c.cuda = true;
  c.gemm_bf16 = {"bf16 GEMM", line(9e-6, 700e12)};
  c.gemm_fp32 = {"fp32 GEMM", line(12e-6, 50e12)};
  c.gemm_bwd_bf16 = {"bf16 GEMM backward", line(18e-6, 600e12)};
  c.gemm_bwd_fp32 = {"fp32 GEMM backward", line(24e-6, 45e12)};
  c.attention_fwd = {"non-causal SDPA forward (cuDNN)", line(20e-6, 500e12)};
  c.attention_bwd = {"non-causal SDPA backward (cuDNN)", line(40e-6, 400e12)};
  c.attention_fwd_fp32 = {"non-causal SDPA forward fp32 (memory-efficient)", line(30e-6, 20e12)};
  c.attention_bwd_fp32 = {"non-causal SDPA backward fp32 (memory-efficient)", line(60e-6, 15e12)};
  c.causal_extra_keys = 64, c.causal_bwd_extra_keys = 96;
  c.causal_what = "causal calls of the sizes above (bf16)";
  c.bias_extra_pairs = 0.5, c.bias_bwd_extra_pairs = 0.25;
  c.bias_what = "non-causal calls under a zero [s, s] bias, 1024-8192 tokens (bf16)";
  // One point of a 16-head sweep at d 128, 4096 tokens: the pairs attended are 4 x 16 x 128 x 4096^2
  // FLOPs non-causal (137.4 GFLOP), half that causal.
  c.attention_by_length = {{"bf16", 16, {{128, 4096, 0.25e-3, 0.8e-3, 0.4e-3, 1.25e-3, 0.5e-3, 1.25e-3, 4.0 * 16 * 128 * 4096.0 * 4096.0}}}};
  c.elementwise = {{"RMSNorm", line(6e-6, 2.5e12)}, {"copy", line(5e-6, 2.9e12)}};
  c.elementwise_pooled = {"elementwise, pooled", line(5.5e-6, 2.7e12, 12)};
  c.launch_s = 4.5e-6;
  c.launch_what = "1-element add, 10000 back to back";
  c.copies = {{"pinned H2D", line(1e-5, 52e9)}, {"pinned D2H", line(1e-5, 48e9)}};
  c.copy_pooled = {"pinned H2D and D2H", line(1e-5, 50e9, 12)};
  c.host_adam = {"host fused AdamW", line(1e-4, 2.2e9)};
  c.cuda_context_gib = 0.52;
  c.gemm_workspace_mib = 32;
  c.memory_what = "cudaMemGetInfo used - reserved after the first GEMM";
  return c;
}

TEST(CalibrationFile, EfficienciesAreFittedRatesOverThePresetPeaks) {
  const Calibration c = h100_calibration();
  const GpuSpec g = calibrated_spec(c);
  EXPECT_EQ(g.name, "h100-80gb-measured");
  EXPECT_DOUBLE_EQ(g.bf16_tflops, c.base.bf16_tflops);  // peaks stay the preset's
  EXPECT_NEAR(g.matmul_efficiency, 700.0 / 989.4, 1e-12);
  EXPECT_DOUBLE_EQ(g.matmul_fixed_s, 9e-6);              // bf16 on a GPU
  EXPECT_NEAR(g.attention_efficiency, 500.0 / 989.4, 1e-12);
  EXPECT_NEAR(g.attention_bwd_efficiency, 400.0 / 989.4, 1e-12);
  EXPECT_DOUBLE_EQ(g.attention_fixed_s, 20e-6);  // bf16's on a GPU
  EXPECT_DOUBLE_EQ(g.attention_bwd_fixed_s, 40e-6);  // the backward fit's own intercept
  EXPECT_DOUBLE_EQ(g.sdpa_attention_bwd_fixed_s, 40e-6);  // the engine's kernel is SDPA
  EXPECT_DOUBLE_EQ(g.attention_causal_extra_keys, 64);  // the causal calls' keys past the diagonal
  EXPECT_DOUBLE_EQ(g.attention_bwd_causal_extra_keys, 96);
  EXPECT_DOUBLE_EQ(g.attention_bias_extra_pairs, 0.5);  // a pair under a bias, in pairs more
  EXPECT_DOUBLE_EQ(g.attention_bwd_bias_extra_pairs, 0.25);
  // Each dtype its own fraction of its own peak (fp32_tflops 67).
  EXPECT_NEAR(g.fp32_matmul_efficiency, 50.0 / 67.0, 1e-12);
  EXPECT_NEAR(g.matmul_bwd_efficiency, 600.0 / 989.4, 1e-12);
  EXPECT_NEAR(g.fp32_matmul_bwd_efficiency, 45.0 / 67.0, 1e-12);
  EXPECT_NEAR(g.fp32_attention_efficiency, 20.0 / 67.0, 1e-12);
  EXPECT_NEAR(g.fp32_attention_bwd_efficiency, 15.0 / 67.0, 1e-12);
  EXPECT_NEAR(g.elementwise_efficiency, 2700.0 / 3350.0, 1e-12);
  EXPECT_DOUBLE_EQ(g.fp32_elementwise_efficiency, 0);  // a GPU: one rate for both dtypes
  EXPECT_DOUBLE_EQ(g.kernel_launch_s, 4.5e-6);
  EXPECT_DOUBLE_EQ(g.pcie_GBps, 50.0);
  EXPECT_DOUBLE_EQ(g.host_adam_params_per_s, 2.2e9);
  EXPECT_DOUBLE_EQ(g.cuda_context_gib, 0.52);
  EXPECT_DOUBLE_EQ(g.gemm_workspace_mib, 32);
}

TEST(CalibrationFile, LoadGpuReadsBackWhatWasWritten) {
  const Calibration c = h100_calibration();
  const std::string text = calibration_toml(c);
  const auto g = load_written(text);
  ASSERT_TRUE(g.ok()) << g.status().message() << "\n" << text;
  const GpuSpec want = calibrated_spec(c);
  EXPECT_EQ(g->name, want.name);
  // %.6g keeps 6 significant digits.
  for (auto [got, expected] : {std::pair{g->matmul_efficiency, want.matmul_efficiency},
                               std::pair{g->attention_efficiency, want.attention_efficiency},
                               std::pair{g->attention_bwd_efficiency, want.attention_bwd_efficiency},
                               std::pair{g->fp32_matmul_efficiency, want.fp32_matmul_efficiency},
                               std::pair{g->fp32_attention_efficiency, want.fp32_attention_efficiency},
                               std::pair{g->fp32_attention_bwd_efficiency, want.fp32_attention_bwd_efficiency},
                               std::pair{g->matmul_bwd_efficiency, want.matmul_bwd_efficiency},
                               std::pair{g->fp32_matmul_bwd_efficiency, want.fp32_matmul_bwd_efficiency},
                               std::pair{g->elementwise_efficiency, want.elementwise_efficiency},
                               std::pair{g->matmul_fixed_s, want.matmul_fixed_s},
                               std::pair{g->attention_bwd_fixed_s, want.attention_bwd_fixed_s},
                               std::pair{g->sdpa_attention_bwd_fixed_s, want.attention_bwd_fixed_s},
                               std::pair{g->attention_causal_extra_keys, want.attention_causal_extra_keys},
                               std::pair{g->attention_bwd_causal_extra_keys, want.attention_bwd_causal_extra_keys},
                               std::pair{g->attention_bias_extra_pairs, want.attention_bias_extra_pairs},
                               std::pair{g->attention_bwd_bias_extra_pairs, want.attention_bwd_bias_extra_pairs},
                               std::pair{g->pcie_GBps, want.pcie_GBps},
                               std::pair{g->memory_gib, want.memory_gib},
                               std::pair{g->nccl_a2a_gib_per_peer, want.nccl_a2a_gib_per_peer},
                               std::pair{g->price_per_gpu_hour, want.price_per_gpu_hour}}) {
    EXPECT_NEAR(got, expected, 1e-5 * expected);
  }
  // Every key line carries a comment naming where its value came from.
  std::istringstream lines(text);
  std::string l;
  int keys = 0;
  while (std::getline(lines, l)) {
    if (l.empty() || l[0] == '#' || l.rfind("name =", 0) == 0) continue;
    ++keys;
    EXPECT_NE(l.find("  # "), std::string::npos) << l;
  }
  EXPECT_EQ(keys, 36);
  EXPECT_NE(text.find("matmul_efficiency = 0.707499  # bf16 GEMM: 700 TFLOP/s, fit of 6 points, residual 2.0 %"),
            std::string::npos)
      << text;
}

// A rate above the datasheet peak is written as the peak, which load_gpu accepts (<= 1).
TEST(CalibrationFile, ARateAboveThePeakIsThePeak) {
  Calibration c = h100_calibration();
  c.gemm_bf16.fit.rate_per_s = 1100e12;
  EXPECT_DOUBLE_EQ(calibrated_spec(c).matmul_efficiency, 1.0);
}

// A CPU's file says how many threads its rates were measured with and how much faster its GEMM ran
// on them than on one (host_share's threads per rank); load_gpu reads both back. A GPU's has neither.
TEST(CalibrationFile, ACpuWritesItsThreadsAndItsGemmThreadSpeedup) {
  Calibration c = h100_calibration();
  c.cuda = false;
  c.cuda_context_gib.reset();
  c.gemm_workspace_mib.reset();
  c.threads = 2;
  c.gemm_fp32_one_thread = FittedKernel{"fp32 GEMM on one thread", line(12e-6, 25e12)};
  c.gemm_bwd_bf16_one_thread = FittedKernel{"bf16 GEMM backward on one thread", line(12e-6, 600e12)};
  const GpuSpec want = calibrated_spec(c);
  EXPECT_DOUBLE_EQ(want.host_threads, 2);
  EXPECT_DOUBLE_EQ(want.matmul_thread_speedup, 2.0);  // 50 / 25 TFLOP/s
  EXPECT_DOUBLE_EQ(want.bf16_matmul_bwd_thread_speedup, 1.0);  // 600 / 600: no faster on two threads
  EXPECT_DOUBLE_EQ(want.matmul_bwd_thread_speedup, 0);         // not measured on one thread
  const std::string text = calibration_toml(c);
  EXPECT_NE(text.find("matmul_thread_speedup = 2  # the fp32 GEMM above over fp32 GEMM on one thread: 25 TFLOP/s"),
            std::string::npos)
      << text;
  const auto g = load_written(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_DOUBLE_EQ(g->host_threads, 2);
  EXPECT_DOUBLE_EQ(g->matmul_thread_speedup, 2);
  EXPECT_DOUBLE_EQ(g->bf16_matmul_bwd_thread_speedup, 1);
  EXPECT_EQ(text.find("\nmatmul_bwd_thread_speedup"), std::string::npos);  // not measured, not written
  EXPECT_EQ(calibration_toml(h100_calibration()).find("host_threads"), std::string::npos);
  EXPECT_DOUBLE_EQ(calibrated_spec(h100_calibration()).host_threads, 0);
}

// A CPU's file has an elementwise rate per dtype: the engine's bf16 layer is elementwise_efficiency,
// its fp32 layer fp32_elementwise_efficiency (a CPU without bf16 units converts every element);
// load_gpu reads both back.
TEST(CalibrationFile, ACpuWritesAnElementwiseRatePerDtype) {
  Calibration c = h100_calibration();
  c.cuda = false;
  c.cuda_context_gib.reset();
  c.gemm_workspace_mib.reset();
  c.elementwise_pooled = {"the engine's elementwise class (bf16)", line(1e-3, 670e9)};
  c.elementwise_fp32 = FittedKernel{"the engine's elementwise class (fp32)", line(1e-3, 1675e9)};
  const GpuSpec want = calibrated_spec(c);
  EXPECT_NEAR(want.elementwise_efficiency, 0.2, 1e-12);  // of hbm_GBps 3350
  EXPECT_NEAR(want.fp32_elementwise_efficiency, 0.5, 1e-12);
  const std::string text = calibration_toml(c);
  EXPECT_NE(text.find("fp32_elementwise_efficiency = 0.5  # the engine's elementwise class (fp32): 1675 GB/s"),
            std::string::npos)
      << text;
  const auto g = load_written(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_NEAR(g->elementwise_efficiency, 0.2, 1e-9);
  EXPECT_NEAR(g->fp32_elementwise_efficiency, 0.5, 1e-9);
  EXPECT_EQ(calibration_toml(h100_calibration()).find("fp32_elementwise_efficiency"), std::string::npos);
}

TEST(CalibrationFile, TheReportPrintsEveryResidual) {
  const std::string r = fit_report(h100_calibration());
  EXPECT_NE(r.find("bf16 GEMM: fixed 9e-06 s, rate 700 TFLOP/s (70.7 % of peak), residual 2.0 % (6 points)"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("pinned D2H: fixed 1e-05 s, rate 48 GB/s, residual 2.0 %"), std::string::npos) << r;
  EXPECT_NE(r.find("causal attention: 64 keys a row past the diagonal forward, 96 backward"), std::string::npos) << r;
  // The rate by length: 137.4 GFLOP non-causal in 0.4 ms forward is 343.6 TFLOP/s; causal, half
  // the pairs in 0.25 ms, 274.9; the backwards at 2.5x those FLOPs.
  EXPECT_NE(r.find("attention by length (bf16, 16 heads;"), std::string::npos) << r;
  EXPECT_NE(r.find("  d 128, 4096 tokens: causal 274.878 / 214.748, non-causal 343.597 / 274.878, biased 274.878 / "
                    "274.878\n"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("attention under a bias: 0.5 pairs more a pair forward, 0.25 backward"), std::string::npos) << r;
}

}  // namespace
}  // namespace spplan::engine
