// `spplan-engine calibrate [--out FILE.toml] [--gpu PRESET|FILE.toml] [--model NAME[,NAME...]]`:
// measures the device the engine runs on and writes a GPU-spec TOML that spplan::load_gpu accepts.
// Without --out it prints the TOML; the fits and their residuals go to stderr.
//
// Both devices measure the same kernel classes (calibrate_probes.hpp) and fit each with the same
// least-squares line (kernel_fit.hpp): bf16 and fp32 GEMMs, forward and backward, at the model's
// own shapes in one step's proportions (QKV, O, MLP up/gate, down, LM head) over a range of token
// counts, the engine's SDPA forward and backward over sequence lengths and head dims (causal,
// non-causal, and under a bias: calibrate_probes.hpp attention_samples), large
// elementwise kernels, launch overhead, copies and the host AdamW. The classes of the dtype the
// engine runs (bf16 on CUDA, fp32 on a CPU) are swept until two sweeps agree. The file
// (calibration_file.hpp) keeps every value's measurement beside it.
// - CUDA (torch::cuda::is_available()): device 0; peaks, memory, links and price from --gpu or the
//   preset that matches the device (match_gpu_preset); name = "<preset>-measured"; also the CUDA
//   context and the cuBLAS workspace. Models: qwen3-0.6b to llama-3.1-8b unless --model. Under a minute.
// - CPU: its measured rates are its peaks (name = "cpu-host"); plus a Gloo all-to-all and
//   all-reduce between 2 local ranks, each GEMM class again on one thread (threads per rank) and
//   the engine's own layer's elementwise class in both dtypes (calibrate_layer.hpp). Models:
//   tiny-llama. Each sweep stops once a call takes its budget (probe_budget.hpp), so emulated bf16
//   is measured small: 70-80 s on a 2-core AMD EPYC without bf16 units, most of it fp32 GEMM and
//   attention sweeps repeated until they agree and the bf16 layer; about 2 minutes on an AVX-512
//   one since attention is timed causal, non-causal and under a bias at each length.
// Exit 0; 2 on bad flags, an unknown model, an unwritable --out, a device no preset matches
// without --gpu, or --gpu without a CUDA device; 1 when a measurement could not be fitted.
#pragma once

#include "engine/run/launcher.hpp"

namespace spplan::engine {

// The whole command: argv[1] == "calibrate". Exit 0, or 2 on bad flags / an unwritable --out.
int calibrate_main(int argc, char** argv);

// In a rank started by calibrate_main's launch_local (2 ranks): the Gloo measurements. Rank 0
// writes "a2a_GBps latency_s" to the file named by SPPLAN_CALIBRATE_COMM_OUT.
int calibrate_comm_rank(const DistEnv& env);

}  // namespace spplan::engine
