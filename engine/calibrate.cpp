#include "engine/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
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
#include "engine/probe_budget.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kCommOutVar = "SPPLAN_CALIBRATE_COMM_OUT";

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One call of f, in seconds.
template <class F>
double time_once(F&& f) {
  const auto t0 = Clock::now();
  f();
  return seconds_since(t0);
}

// A rate and the size it was measured at (written beside it in the TOML).
struct Rate {
  double per_s = 0;
  int64_t size = 0;
};

// GEMM FLOP/s of n x n x n in `dtype`, n grown from 64 until one product takes 0.1 s (at most
// 2048, where every CPU GEMM is at its plateau): 2048^3 in bf16 is 50 s on a CPU that emulates bf16.
Rate gemm_flops(at::ScalarType dtype) {
  const ProbeBudget budget{64, 2048, 0.1, 3, 1.0};
  const ProbeTiming t = time_within_budget(budget, [&](int64_t n) {
    const at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
    at::Tensor c = at::empty({n, n}, a.options());
    return time_once([&] { at::mm_out(c, a, b); });
  });
  const double n = static_cast<double>(t.size);
  return {2.0 * n * n * n / t.best_s, t.size};
}

// The engine's causal attention (tiny-llama shape: 8 heads, 4 KV heads, head_dim 32, fp32) at s
// tokens, s grown from 256 until forward+backward takes 0.2 s (at most 4096); forward and
// backward FLOP/s counted as the costmodel counts them (causal half; backward 2.5x the forward).
struct AttentionRates {
  double fwd_flops = 0, bwd_flops = 0;
  int64_t tokens = 0;
};
AttentionRates attention_flops() {
  const int64_t h = 8, hkv = 4, d = 32;
  auto inputs = [&](int64_t s) {
    return std::array<at::Tensor, 3>{at::randn({1, s, h, d}).requires_grad_(true),
                                     at::randn({1, s, hkv, d}).requires_grad_(true),
                                     at::randn({1, s, hkv, d}).requires_grad_(true)};
  };
  const ProbeTiming both = time_within_budget({256, 4096, 0.2, 2, 2.0}, [&](int64_t s) {
    const auto [q, k, v] = inputs(s);
    return time_once([&] { torch::autograd::backward({causal_attention(q, k, v).sum()}); });
  });
  const int64_t s = both.size;
  const auto [q, k, v] = inputs(s);
  const ProbeTiming fwd = time_within_budget({s, s, 0.0, 3, 1.0}, [&](int64_t) {
    at::NoGradGuard g;
    return time_once([&] { (void)causal_attention(q, k, v); });
  });
  const double fwd_work = 2.0 * 2.0 * s * s * h * d / 2.0;
  const double t_bwd = std::max(both.best_s - fwd.best_s, 1e-9);
  return {fwd_work / fwd.best_s, 2.5 * fwd_work / t_bwd, s};
}

// Large-tensor copy: bytes read + bytes written per second, 256 MiB each way (far past any cache).
double copy_Bps() {
  const int64_t n = 64 << 20;
  const at::Tensor src = at::randn({n});
  at::Tensor dst = at::empty({n});
  const ProbeTiming t = time_within_budget({n, n, 0.0, 5, 1.0}, [&](int64_t) { return time_once([&] { dst.copy_(src); }); });
  return 2.0 * 4.0 * n / t.best_s;
}

// One tiny op (add of 1 element): the mean of `calls` back-to-back calls, grown until 0.02 s.
double tiny_op_s() {
  at::Tensor x = at::zeros({1});
  const at::Tensor y = at::ones({1});
  const ProbeTiming t = time_within_budget({1000, 1 << 20, 0.02, 2, 0.5}, [&](int64_t calls) {
    return time_once([&] {
      for (int64_t i = 0; i < calls; ++i) x.add_(y);
    });
  });
  return t.best_s / static_cast<double>(t.size);
}

// LibTorch's fused AdamW (the engine's optimizer step) over n flat fp32 parameters, n grown from
// 1M until one step takes 0.05 s (at most 16M, past the caches).
Rate adamw_params_per_s() {
  const at::Tensor step = at::full({}, 1.0);
  const ProbeTiming t = time_within_budget({1 << 20, 16 << 20, 0.05, 3, 1.0}, [&](int64_t n) {
    at::Tensor p = at::randn({n}), g = at::randn({n}), m = at::zeros({n}), v = at::zeros({n});
    return time_once([&] {
      at::_fused_adamw_({p}, {g}, {m}, {v}, {}, {step}, 1e-3, 0.9, 0.999, 0.01, 1e-8, false, false);
    });
  });
  return {static_cast<double>(t.size) / t.best_s, t.size};
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
    const double t_a2a =
        time_within_budget({n, n, 0.0, 5, 2.0}, [&](int64_t) { return time_once([&] { comm.all_to_all_sp(out, in); }); })
            .best_s;
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

  const Rate gemm = gemm_flops(at::kFloat);
  const Rate gemm_bf16 = gemm_flops(at::kBFloat16);
  const AttentionRates attn = attention_flops();
  const double hbm_GBps = copy_Bps() / 1e9;
  const double launch_s = tiny_op_s();
  const Rate adam = adamw_params_per_s();
  const double mem_gib = mem_total_gib();
  if (!(a2a_GBps > 0)) {
    a2a_GBps = hbm_GBps;
    comm_note = "  # the 2-rank Gloo measurement failed: copy bandwidth instead";
  }
  auto eff = [&](double rate) { return std::clamp(rate / gemm.per_s, 0.01, 1.0); };

  std::ostringstream t;
  t << "# This machine's CPU as the costmodel's accelerator, measured by `spplan-engine calibrate`\n"
    << "# in " << fmt(seconds_since(t_start)) << " s with " << cores << " threads.\n"
    << "name = \"cpu-host\"\n"
    << "# GEMM rates (n^3 at::mm, all cores; n grown until a product takes 0.1 s) in bf16 and fp32:\n"
    << "# the peaks of bf16 and fp32 plans. A CPU without native bf16 runs bf16 emulated, slowly.\n"
    << "bf16_tflops = " << fmt(gemm_bf16.per_s / 1e12) << "  # n = " << gemm_bf16.size << "\n"
    << "fp32_tflops = " << fmt(gemm.per_s / 1e12) << "  # n = " << gemm.size << "\n"
    << "matmul_efficiency = 1.0\n"
    << "# the engine's causal attention (" << attn.tokens << " tokens, 8 heads, d 32, fp32) over the fp32 GEMM rate\n"
    << "attention_efficiency = " << fmt(eff(attn.fwd_flops)) << "\n"
    << "attention_bwd_efficiency = " << fmt(eff(attn.bwd_flops)) << "\n"
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
    << "# LibTorch fused AdamW over " << adam.size << " fp32 parameters\n"
    << "host_adam_params_per_s = " << fmt(adam.per_s) << "\n"
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
