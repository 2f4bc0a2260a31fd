// What `spplan calibrate` measured, turned into the GPU TOML that spplan::load_gpu reads.
//
// The file is the base spec (a GPU preset's datasheet peaks, memory, links and price; on a CPU the
// measured rates themselves are the peaks) with every key a measurement gives replaced by it and
// a comment beside it naming the measurement: which kernels, which sizes, the fit and its residual.
// Mapping (each fit is kernel_fit.hpp's line; efficiency = fitted asymptotic rate / peak):
//   matmul_efficiency        bf16 GEMM rate / bf16_tflops
//   fp32_matmul_efficiency   fp32 GEMM rate / fp32_tflops (each dtype its own: CPUs differ)
//   matmul_bwd_efficiency, fp32_matmul_bwd_efficiency   the same GEMMs' backward (input and
//                            weight gradients as autograd runs them) / the dtype's peak
//   host_threads, matmul_thread_speedup, matmul_bwd_thread_speedup, bf16_matmul_thread_speedup,
//   bf16_matmul_bwd_thread_speedup   CPU only: the threads, and each GEMM class's rate on them
//                            over its rate on one thread (fp32 unless named bf16)
//   matmul_fixed_s           the GEMM fit's intercept (bf16 on a GPU; fp32, the CPU engine's default)
//   attention_efficiency     bf16 non-causal SDPA forward FLOP rate (every pair computed) / bf16_tflops
//   attention_bwd_efficiency the backward's, its FLOPs counted at 2.5x the forward's
//   fp32_attention_efficiency, fp32_attention_bwd_efficiency   the same in fp32, / fp32_tflops
//   attention_fixed_s        the forward fit's intercept (the engine's dtype)
//   attention_bwd_fixed_s    the backward fit's intercept: what each ring block pays again
//   attention_causal_extra_keys, attention_bwd_causal_extra_keys   the keys a row of a causal call
//                            of the same sizes computes past its diagonal, against those fits (the
//                            engine's dtype; kernel_fit.hpp excess_units)
//   attention_bias_extra_pairs, attention_bwd_bias_extra_pairs   what a pair of a non-causal call
//                            under a zero bias costs more, in pairs, against those fits (likewise)
//   elementwise_efficiency   the pooled fit of the large elementwise kernels' bytes / hbm_GBps
//                            (on a CPU: the engine's bf16 layer's elementwise class)
//   fp32_elementwise_efficiency   CPU only: the same class of the engine's fp32 layer
//   kernel_launch_s          the mean time of a back-to-back 1-element kernel
//   pcie_GBps                the pooled fit of pinned host-to-device and device-to-host copies
//   host_adam_params_per_s   the host's fused AdamW, parameters per second
//   cuda_context_gib, gemm_workspace_mib   measured device memory (0 on a CPU)
// No LibTorch here: tests/engine/measure/calibration_file_test.cpp writes and reloads it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/measure/kernel_fit.hpp"
#include "planner/config/cluster_spec.hpp"

namespace spplan::engine {

// One kernel class: its fit and what was measured, in words ("bf16 GEMM, qwen3-1.7b QKV/O/MLP/LM
// head shapes, 256-16384 tokens").
struct FittedKernel {
  std::string what;
  KernelFit fit;
};

struct Calibration {
  GpuSpec base;             // peaks, memory, links, price, and every key not measured
  std::string base_from;    // "preset h100-80gb (matched to the device)", "measured on this CPU"
  std::string device;       // "NVIDIA H100 80GB HBM3", "CPU, 2 threads"
  std::string name;         // "h100-80gb-measured"
  bool cuda = false;
  FittedKernel gemm_bf16, gemm_fp32;
  FittedKernel gemm_bwd_bf16, gemm_bwd_fp32;  // their backward
  // CPU: the threads the rates were measured with, and each GEMM class again on one thread (absent
  // on a GPU, or when calibrate ran on one thread): their thread speedups.
  int64_t threads = 0;
  std::optional<FittedKernel> gemm_fp32_one_thread, gemm_bwd_fp32_one_thread;
  std::optional<FittedKernel> gemm_bf16_one_thread, gemm_bwd_bf16_one_thread;
  FittedKernel attention_fwd, attention_bwd;            // bf16, non-causal calls
  FittedKernel attention_fwd_fp32, attention_bwd_fp32;  // fp32, non-causal calls
  double causal_extra_keys = 0, causal_bwd_extra_keys = 0;  // the engine's dtype's (kernel_fit.hpp)
  std::string causal_what;
  double bias_extra_pairs = 0, bias_bwd_extra_pairs = 0;  // likewise, calls under a bias
  std::string bias_what;
  // Each attention sweep's points (the last sweep of each dtype), printed as rates by length: what
  // prices a ring's short blocks against one long call.
  struct AttentionByLength {
    std::string dtype;
    int64_t heads = 0;
    std::vector<AttentionTimes> points;
  };
  std::vector<AttentionByLength> attention_by_length;
  std::vector<FittedKernel> elementwise;  // each kernel, printed
  std::vector<std::string> unfitted;      // a printed-only kernel whose own fit failed, and why
  // A rate whose sweeps never agreed (each sweep's rate named), or a thread speedup no machine can
  // have: printed and written into the file's comments, so a calibration taken on a busy machine
  // says so instead of jumping unsaid (bf16 GEMMs once read 0.076, then 2.51 TFLOP/s).
  std::vector<std::string> warnings;
  // The elementwise_efficiency key: on a GPU all their points pooled (bf16); on a CPU the engine's
  // own bf16 layer (calibrate_layer.hpp).
  FittedKernel elementwise_pooled;
  std::optional<FittedKernel> elementwise_fp32;  // CPU: the fp32 layer, fp32_elementwise_efficiency
  double launch_s = 0;
  std::string launch_what;
  std::vector<FittedKernel> copies;       // H2D and D2H, printed
  FittedKernel copy_pooled;               // the key
  FittedKernel host_adam;
  std::optional<double> cuda_context_gib;   // measured where a CUDA device is
  std::optional<double> gemm_workspace_mib;
  std::string memory_what;
  double seconds = 0;  // how long the calibration took
};

// The spec the file describes (what load_gpu will read back).
GpuSpec calibrated_spec(const Calibration& c);

// The TOML text: every key of calibrated_spec, each measured one with its measurement.
std::string calibration_toml(const Calibration& c);

// One line per fit: "bf16 GEMM ...: fixed 8.1 us, rate 702 T/s, efficiency 0.71, residual 2.3 % (12 points)".
std::string fit_report(const Calibration& c);

}  // namespace spplan::engine
