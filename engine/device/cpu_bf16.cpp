#include "engine/device/cpu_bf16.hpp"

#include <chrono>
#include <cstdio>

#include <ATen/ATen.h>

#include "engine/device/probe_budget.hpp"

namespace spplan::engine {
namespace {

double gemm_flops(at::ScalarType dtype) {
  constexpr int64_t n = 128;
  const at::Tensor a = at::randn({n, n}).to(dtype), b = at::randn({n, n}).to(dtype);
  at::Tensor c = at::empty({n, n}, a.options());
  const ProbeTiming t = time_within_budget({n, n, 0.0, 2, 0.2}, [&](int64_t) {
    const auto t0 = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  return 2.0 * n * n * n / t.best_s;
}

}  // namespace

CpuBf16Probe probe_cpu_bf16() { return {gemm_flops(at::kBFloat16), gemm_flops(at::kFloat)}; }

std::string bf16_emulated_note(const CpuBf16Probe& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "spplan-engine: bf16 is emulated on this CPU (bf16 GEMM %.2f GFLOP/s, fp32 %.2f GFLOP/s: no native "
                "bf16 kernels), so bf16 steps are slow here; --precision fp32 runs at full speed",
                p.bf16_flops / 1e9, p.fp32_flops / 1e9);
  return buf;
}

}  // namespace spplan::engine
