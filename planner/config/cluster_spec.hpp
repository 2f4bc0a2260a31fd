// GpuSpec: one accelerator and the node it sits in (datasheet numbers plus the efficiency factors
// that `spplan calibrate` can fit). ClusterSpec: how many of them. Hardware only.
#pragma once

#include <cstdint>
#include <string>

namespace spplan {

struct GpuSpec {
  std::string name;
  // The preset a GPU file extends (`base = "h100-80gb"`), "" otherwise: its measured accuracy is
  // the base's (the same silicon and software), not "not validated".
  std::string base;
  const std::string& measured_as() const { return base.empty() ? name : base; }
  double memory_gib = 0;                // device memory as the driver reports it
  double bf16_tflops = 0;               // dense bf16 tensor-core peak (no sparsity)
  double fp32_tflops = 0;               // dense fp32 peak (PyTorch's default fp32 matmul, no TF32);
                                        // 0: not given, fp32 plans are priced at bf16_tflops
  double hbm_GBps = 0;                  // device memory bandwidth
  int64_t gpus_per_node = 8;
  double intra_node_GBps = 0;           // per GPU, one direction, NVLink (or PCIe P2P)
  double inter_node_GBps = 0;           // per GPU, one direction, network
  double pcie_GBps = 0;                 // per GPU host<->device, one direction
  double host_memory_gib_per_node = 0;  // CPU RAM per node
  double host_adam_params_per_s = 0;    // DeepSpeed CPU Adam throughput of a whole node, parameters/s
  double nvme_GBps_per_node = 0;        // NVMe read/write bandwidth of one node (0 = no NVMe)
  double price_per_gpu_hour = 0;        // USD, on-demand cloud list price

  // Efficiency factors (fractions of peak that real kernels reach); physical sources in configs.
  double matmul_efficiency = 0.7;       // large bf16 GEMMs
  double attention_efficiency = 0.35;   // flash-style attention, forward
  double attention_bwd_efficiency = 0.3;// flash-style attention, backward (counted at 2.5x fwd FLOPs)
  // The same for the kernel PyTorch's scaled_dot_product_attention runs on this GPU in bf16
  // (AttentionKernel::kSdpa: cuDNN's on Hopper). A GPU file without them: the flash rates.
  double sdpa_attention_efficiency = 0.35;
  double sdpa_attention_bwd_efficiency = 0.3;
  // The same rates for fp32 operands, as fractions of fp32_tflops. A GPU's fp32 GEMM runs on other
  // units than its bf16 tensor cores, and a CPU that emulates bf16 (or has bf16 units) runs bf16 and
  // fp32 at unrelated rates, so one efficiency cannot serve both (an AVX2 EPYC's bf16 GEMMs
  // ran at 1/12 of its fp32 rate: validation/engine/cpu-amd-epyc-zen3-avx2-*). 0 (a file without
  // them): the bf16 efficiencies above.
  double fp32_matmul_efficiency = 0;
  double fp32_attention_efficiency = 0;
  double fp32_attention_bwd_efficiency = 0;
  // A GEMM's backward: the input gradient dY @ W and the weight gradient dY^T @ X, together. They
  // read their operands in other layouts than the forward X @ W^T, and some kernels run those at
  // other rates: PyTorch's bf16 GEMM on a CPU without bf16 units runs dY @ W at 1.3-2.5 GFLOP/s
  // against 15-30 for the other two (a 2-vCPU AVX2 AMD EPYC, tiny-llama's shapes). Measured by
  // `spplan calibrate`; 0 (a file without them): the forward's fractions above, per dtype.
  double matmul_bwd_efficiency = 0;
  double fp32_matmul_bwd_efficiency = 0;
  double comm_efficiency = 0.8;         // achieved / nominal link bandwidth for large collectives
  double kernel_launch_s = 5e-6;        // fixed cost per elementwise kernel (launch + tail)
  // Achieved / nominal HBM bandwidth of a large memory-bound kernel (a copy, an elementwise op).
  double elementwise_efficiency = 1.0;
  // The same for kernels on fp32 tensors. A GPU moves bytes at one rate whatever they hold, but a
  // CPU without bf16 units converts every bf16 element to fp32 and back, so its bf16 kernels are
  // bound by those instructions, not by memory (as on an AVX2 EPYC). Measured by `spplan calibrate` on a CPU;
  // 0 (a file without it): elementwise_efficiency.
  double fp32_elementwise_efficiency = 0;
  // Fixed cost of one GEMM / one attention call beyond its FLOPs at the rates above: launch, the
  // tile ramp and the last partial wave. `spplan calibrate` fits it as the intercept of time
  // against work; a preset without a measurement uses the launch cost.
  // Attention's fixed cost is per kernel and direction: a backward call also runs its
  // preprocessing (dO . O) and the fp32 dQ accumulator's zeroing and cast, and cuDNN's kernel
  // schedules its tiles otherwise than FlashAttention 2's. It is what a ring pays once per block
  // (cp blocks a pass where Ulysses makes one call). A file without the backward or SDPA keys:
  // attention_fixed_s (with a base: the base's).
  double matmul_fixed_s = 5e-6;
  double attention_fixed_s = 5e-6;
  double attention_bwd_fixed_s = 5e-6;
  double sdpa_attention_fixed_s = 5e-6;
  double sdpa_attention_bwd_fixed_s = 5e-6;
  double collective_latency_s = 2e-5;   // fixed cost per collective call
  // Keys a query of a causal attention call computes past what it attends to, forward and
  // backward: a blockwise kernel runs the key tiles its diagonal crosses whole and masks them, about
  // half a tile a query (LibTorch's CPU flash kernel splits keys in blocks of 512; FlashAttention
  // 2's tiles are 64-128 keys), and a window's first tile likewise. A causal call of s queries then
  // costs s (s / 2 + extra) pairs at the rate of a non-causal call, whose tiles are all whole: what
  // sets a ring's short diagonal blocks and the window's masked blocks apart from one long call
  // (compute.hpp diagonal_rows). Measured by `spplan calibrate` against non-causal calls of the same
  // sizes (its attention rates are then the non-causal calls'); 0 (the presets, older
  // calibrations): the attention rates are causal calls' rates, which count it already.
  double attention_causal_extra_keys = 0;
  double attention_bwd_causal_extra_keys = 0;
  // What a pair computed under an additive bias costs beyond an unmasked one, in pairs, forward and
  // backward: the kernel reads the bias tile and adds it to every score (the engine's masked window
  // blocks, `window_in_masked_blocks`: LibTorch's CPU flash kernel takes a window only so, and on
  // CUDA a bias sends the call to the memory-efficient kernel). Measured by `spplan calibrate`
  // (non-causal calls under a zero bias against unmasked ones, up to 8K tokens); 0: not measured.
  double attention_bias_extra_pairs = 0;
  double attention_bwd_bias_extra_pairs = 0;

  // Memory the framework does not see (calibrate with nvidia-smi minus torch's reserved).
  double cuda_context_gib = 0.75;       // CUDA context + loaded kernels (cuBLAS, FA, NCCL)
  double nccl_gib_per_group = 0.5;      // NCCL buffers per communicator
  // NCCL all-to-all connects every peer pair: +3.3 GB per GPU measured for the first
  // all_to_all_single on 8xH100, 7 peers (NCCL issue #1685, MEMORY-FACTS 6.4).
  double nccl_a2a_gib_per_peer = 3.3e9 / 7.0 / (1024.0 * 1024.0 * 1024.0);
  // GEMM workspaces: cuBLAS keeps 32 MiB per stream on sm90, two streams (compute and the side
  // stream DeepSpeed reduces on) (PyTorch CublasHandlePool.cpp, MEMORY-FACTS 6.3).
  double gemm_workspace_mib = 64.0;
  double allocator_fragmentation = 0.05;// (reserved - allocated) / memory freed within a step (expandable segments)

  // A CPU measured by `spplan calibrate` (0: not one): the threads its rates were measured with,
  // and each GEMM class's rate at that many threads over its rate at one (fp32 forward, fp32
  // backward, bf16 forward, bf16 backward; 0: the fp32 forward's). The engine runs
  // max(1, host_threads / ranks) threads a rank (worker.cpp), and GEMMs do not speed up with
  // threads as attention and elementwise kernels do, nor all alike (AMD EPYC Zen 3, 2 threads:
  // fp32 GEMM 1.68-1.92x, bf16 GEMM forward 1.45x, its emulated backward 1.0x; SDPA 1.94x,
  // elementwise 1.85-2.2x; validation/engine/cpu-amd-epyc-zen3-avx2-*), so the engine's
  // predictions share the rates by each (engine/run/predict.cpp host_share).
  double host_threads = 0;
  double matmul_thread_speedup = 0;
  double matmul_bwd_thread_speedup = 0;
  double bf16_matmul_thread_speedup = 0;
  double bf16_matmul_bwd_thread_speedup = 0;
};

// The largest cluster any input may describe (flags, plan files, CSV rows).
inline constexpr int64_t kMaxGpus = int64_t{1} << 24;

struct ClusterSpec {
  GpuSpec gpu;
  int64_t num_gpus = 1;
  int64_t gpus_per_node() const { return gpu.gpus_per_node; }
  int64_t num_nodes() const { return (num_gpus + gpu.gpus_per_node - 1) / gpu.gpus_per_node; }
};

}  // namespace spplan
