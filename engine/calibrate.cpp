#include "engine/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/attention.hpp"
#include "engine/comm.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kCommOutVar = "SPPLAN_CALIBRATE_COMM_OUT";

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Best (smallest) time of `reps` calls after one warm-up call.
template <class F>
double best_time(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// GEMM FLOP/s of n x n x n in `dtype`; the largest size is the one reported.
double gemm_flops(int64_t n, int reps, at::ScalarType dtype = at::kFloat) {
  const at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  at::Tensor c = at::empty({n, n}, a.options());
  const double t = best_time(reps, [&] { at::mm_out(c, a, b); });
  return 2.0 * n * n * n / t;
}

// The engine's causal attention (tiny-llama shape: 8 heads, 4 KV heads, head_dim 32, 4096 tokens),
// forward and forward+backward FLOP/s counted as the costmodel counts them (causal half; backward
// 2.5x the forward).
std::pair<double, double> attention_flops() {
  const int64_t s = 4096, h = 8, hkv = 4, d = 32;
  const double fwd = 2.0 * 2.0 * s * s * h * d / 2.0;
  const at::Tensor q = at::randn({1, s, h, d}).requires_grad_(true);
  const at::Tensor k = at::randn({1, s, hkv, d}).requires_grad_(true);
  const at::Tensor v = at::randn({1, s, hkv, d}).requires_grad_(true);
  const double t_fwd = best_time(3, [&] {
    at::NoGradGuard g;
    (void)causal_attention(q, k, v);
  });
  const double t_both = best_time(3, [&] {
    at::Tensor o = causal_attention(q, k, v);
    torch::autograd::backward({o.sum()});
  });
  const double t_bwd = std::max(t_both - t_fwd, 1e-9);
  return {fwd / t_fwd, 2.5 * fwd / t_bwd};
}

// Large-tensor copy: bytes read + bytes written per second (256 MiB each way).
double copy_Bps() {
  const int64_t n = 64 << 20;
  const at::Tensor src = at::randn({n});
  at::Tensor dst = at::empty({n});
  const double t = best_time(5, [&] { dst.copy_(src); });
  return 2.0 * 4.0 * n / t;
}

// One tiny op (add of 1 element), averaged over many calls.
double tiny_op_s() {
  at::Tensor x = at::zeros({1});
  const at::Tensor y = at::ones({1});
  for (int i = 0; i < 1000; ++i) x.add_(y);
  const int reps = 20000;
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) x.add_(y);
  return seconds_since(t0) / reps;
}

// LibTorch's fused AdamW (the engine's optimizer step) over 10M flat fp32 parameters.
double adamw_params_per_s() {
  const int64_t n = 10'000'000;
  at::Tensor p = at::randn({n}), g = at::randn({n}), m = at::zeros({n}), v = at::zeros({n});
  const at::Tensor step = at::full({}, 1.0);
  const double t = best_time(5, [&] {
    at::_fused_adamw_({p}, {g}, {m}, {v}, {}, {step}, 1e-3, 0.9, 0.999, 0.01, 1e-8, false, false);
  });
  return n / t;
}

double mem_total_gib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (in >> key) {
    if (key == "MemTotal:") {
      in >> kb;
      break;
    }
  }
  return kb / (1024.0 * 1024.0);
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

int bad_input(const std::string& message) {
  std::cerr << message << "\n";
  return 2;
}

}  // namespace

int calibrate_comm_rank(const DistEnv& env) {
  try {
    Comm comm(env, /*sp=*/2, c10::Device(c10::kCPU), std::chrono::seconds(120));
    const int64_t n = 8 << 20;  // 32 MiB per rank, half of it goes to the peer
    at::Tensor in = at::randn({2, n / 2}), out = at::empty({2, n / 2});
    const double t_a2a = best_time(5, [&] { comm.all_to_all_sp(out, in); });
    at::Tensor one = at::ones({1});
    for (int i = 0; i < 20; ++i) comm.all_reduce_sum(one);
    const int reps = 200;
    comm.barrier();
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) comm.all_reduce_sum(one);
    const double latency = seconds_since(t0) / reps;
    if (env.rank == 0) {
      const char* path = std::getenv(kCommOutVar);
      if (path != nullptr) std::ofstream(path) << fmt(4.0 * n / 2 / t_a2a / 1e9) << " " << fmt(latency) << "\n";
    }
    comm.barrier();
  } catch (const std::exception& e) {
    std::cerr << "spplan-engine calibrate: rank " << env.rank << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int calibrate_main(int argc, char** argv) {
  std::string out_path;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc && argv[i + 1][0] != '\0') {
      out_path = argv[++i];
    } else {
      return bad_input(std::string("spplan-engine calibrate: argument \"") + argv[i] +
                       "\" is not known (allowed: --out FILE.toml)");
    }
  }
  const auto t_start = Clock::now();
  const int64_t cores = std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  at::set_num_threads(static_cast<int>(cores));

  // Gloo between 2 local ranks first (fork/exec before this process starts its thread pools).
  double a2a_GBps = 0, latency_s = 0;
  std::string comm_note;
  {
    char tmpl[] = "/tmp/spplan-calibrate-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd >= 0) ::close(fd);
    ::setenv(kCommOutVar, tmpl, 1);
    const int rc = fd >= 0 ? launch_local(2, argc, argv) : 1;
    ::unsetenv(kCommOutVar);
    std::ifstream in(tmpl);
    if (rc != 0 || !(in >> a2a_GBps >> latency_s) || !(a2a_GBps > 0)) a2a_GBps = 0;
    if (fd >= 0) ::unlink(tmpl);
  }

  gemm_flops(512, 10);  // smaller sizes warm the pool up; the large size is the rate
  gemm_flops(1024, 5);
  const double gemm = gemm_flops(2048, 3);
  const double gemm_bf16 = gemm_flops(2048, 3, at::kBFloat16);
  const auto [attn_fwd, attn_bwd] = attention_flops();
  const double hbm_GBps = copy_Bps() / 1e9;
  const double launch_s = tiny_op_s();
  const double adam = adamw_params_per_s();
  const double mem_gib = mem_total_gib();
  if (!(a2a_GBps > 0)) {
    a2a_GBps = hbm_GBps;
    comm_note = "  # the 2-rank Gloo measurement failed: copy bandwidth instead";
  }
  auto eff = [&](double rate) { return std::clamp(rate / gemm, 0.01, 1.0); };

  std::ostringstream t;
  t << "# This machine's CPU as the costmodel's accelerator, measured by `spplan-engine calibrate`\n"
    << "# in " << fmt(seconds_since(t_start)) << " s with " << cores << " threads.\n"
    << "name = \"cpu-host\"\n"
    << "# GEMM rates (2048^3 at::mm, all cores) in bf16 and fp32: the peaks of bf16 and fp32 plans\n"
    << "bf16_tflops = " << fmt(gemm_bf16 / 1e12) << "\n"
    << "fp32_tflops = " << fmt(gemm / 1e12) << "\n"
    << "matmul_efficiency = 1.0\n"
    << "# the engine's causal attention (4096 tokens, 8 heads, d 32, fp32) over the fp32 GEMM rate\n"
    << "attention_efficiency = " << fmt(eff(attn_fwd)) << "\n"
    << "attention_bwd_efficiency = " << fmt(eff(attn_bwd)) << "\n"
    << "# copy of a 256 MiB fp32 tensor, bytes read + written per second\n"
    << "hbm_GBps = " << fmt(hbm_GBps) << "\n"
    << "# Gloo all-to-all between 2 local ranks over loopback, bytes sent to the peer per second\n"
    << "intra_node_GBps = " << fmt(a2a_GBps) << comm_note << "\n"
    << "inter_node_GBps = " << fmt(a2a_GBps) << "\n"
    << "comm_efficiency = 1.0\n"
    << "pcie_GBps = " << fmt(hbm_GBps) << "\n"
    << "# MemTotal of /proc/meminfo\n"
    << "memory_gib = " << fmt(mem_gib) << "\n"
    << "host_memory_gib_per_node = " << fmt(mem_gib) << "\n"
    << "gpus_per_node = " << cores << "\n"
    << "# LibTorch fused AdamW over 10M fp32 parameters\n"
    << "host_adam_params_per_s = " << fmt(adam) << "\n"
    << "price_per_gpu_hour = 0\n"
    << "# one tiny op (1-element add) and one tiny Gloo all-reduce between 2 local ranks\n"
    << "kernel_launch_s = " << fmt(launch_s) << "\n"
    << "collective_latency_s = " << fmt(latency_s) << "\n"
    << "# a CPU process has no CUDA context, NCCL buffers, cuBLAS workspace or caching-allocator slack\n"
    << "cuda_context_gib = 0\n"
    << "nccl_gib_per_group = 0\n"
    << "nccl_a2a_gib_per_peer = 0\n"
    << "gemm_workspace_mib = 0\n"
    << "allocator_fragmentation = 0\n";
  if (out_path.empty()) {
    std::cout << t.str();
    return 0;
  }
  if (auto s = write_file_atomically(out_path, t.str()); !s) return bad_input("--out: " + s.message());
  std::cerr << "spplan-engine calibrate: wrote " << out_path << "\n";
  return 0;
}

}  // namespace spplan::engine
