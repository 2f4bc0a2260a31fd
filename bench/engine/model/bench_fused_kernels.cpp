// The fused CUDA kernels (engine/model/cuda/) against their ATen reference (engine/model/fused_reference.hpp)
// on the same GPU in one process, at Qwen3-0.6B and 1.7B layer shapes, 16K tokens, bf16. Prints
// each op's time, its rate in GB/s counting each tensor read once and written once (the minimum
// traffic: what "near HBM bandwidth" is measured against, 3.35 TB/s on an H100 SXM), and the
// ratio reference / kernel. Without a GPU it says so and exits 0.
//
// Run: build/bench/engine/bench_fused_kernels
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include "engine/io/data.hpp"
#include "engine/model/cuda/fused_cuda.hpp"
#include "engine/model/fused_reference.hpp"
#include "engine/parallel/comm.hpp"

namespace {

using namespace spplan::engine;

// Best of 10 timed calls after 3 warm-ups, seconds.
double best_seconds(const std::function<void()>& fn) {
  const c10::Device gpu(at::kCUDA, 0);
  double best = 1e30;
  for (int i = 0; i < 13; ++i) {
    synchronize(gpu);
    const auto start = std::chrono::steady_clock::now();
    fn();
    synchronize(gpu);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i >= 3) best = std::min(best, s);
  }
  return best;
}

void row(const std::string& op, double bytes, const std::function<void()>& kernel, const std::function<void()>& aten) {
  const double k = best_seconds(kernel), a = best_seconds(aten);
  std::printf("%-34s %9.3f ms %8.0f GB/s   %9.3f ms %8.0f GB/s   %6.2fx\n", op.c_str(), k * 1e3, bytes / k / 1e9,
              a * 1e3, bytes / a / 1e9, a / k);
}

struct Shape {
  const char* model;
  int64_t hidden, ffn, heads, kv_heads, head_dim, vocab;
};

void bench(const Shape& s, int64_t tokens) {
  const auto opts = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  const double e = 2;  // bytes per bf16 element
  const int64_t T = tokens, h = s.hidden, i = s.ffn, d = s.head_dim, H = s.heads, W = (H + 2 * s.kv_heads) * d;
  std::printf("\n%s, %lld tokens, bf16            kernel                          ATen reference                 ratio\n",
              s.model, static_cast<long long>(T));
  const at::Tensor r = at::randn({T, h}, opts), x = at::randn({T, h}, opts), w = at::ones({h}, opts);
  row("add + RMSNorm forward", 4.0 * T * h * e, [&] { kernels::add_rms_norm_forward(r, x, w, 1e-6); },
      [&] { reference::add_rms_norm_forward(r, x, w, 1e-6); });
  const reference::NormForward f = reference::add_rms_norm_forward(r, x, w, 1e-6);
  row("add + RMSNorm backward", 4.0 * T * h * e, [&] { kernels::add_rms_norm_backward(x, r, f.sum, w, f.rstd); },
      [&] { reference::add_rms_norm_backward(x, r, f.sum, w, f.rstd); });
  const at::Tensor qkv = at::randn({1, T, W}, opts), wd = at::ones({d}, opts);
  const at::Tensor q = qkv.narrow(2, 0, H * d).view({1, T, H, d});
  const at::Tensor angles = at::outer(at::arange(T, opts.dtype(at::kFloat)), at::rand({d / 2}, opts.dtype(at::kFloat)));
  const at::Tensor cos = angles.cos().to(at::kBFloat16), sin = angles.sin().to(at::kBFloat16);
  row("q RMSNorm + RoPE forward", 2.0 * T * H * d * e, [&] { kernels::qk_norm_rope_forward(q, wd, cos, sin, 1e-6); },
      [&] { reference::qk_norm_rope_forward(q, wd, cos, sin, 1e-6); });
  const reference::QkNormRopeForward qf = reference::qk_norm_rope_forward(q, wd, cos, sin, 1e-6);
  row("q RMSNorm + RoPE backward", 3.0 * T * H * d * e,
      [&] { kernels::qk_norm_rope_backward(qf.y, q, wd, cos, sin, qf.rstd); },
      [&] { reference::qk_norm_rope_backward(qf.y, q, wd, cos, sin, qf.rstd); });
  at::Tensor gate_up = at::randn({T, 2 * i}, opts);
  const at::Tensor dc = at::randn({T, i}, opts);
  row("SwiGLU forward", 3.0 * T * i * e, [&] { kernels::swiglu_forward(gate_up); },
      [&] { reference::swiglu_forward(gate_up); });
  row("SwiGLU backward (in place)", 5.0 * T * i * e, [&] { kernels::swiglu_backward_in_place(gate_up, dc); },
      [&] { reference::swiglu_backward_in_place(gate_up, dc); });
  // One chunk of the tiled loss at Liger's size: T / ceil(V / h) tokens.
  const int64_t chunk = T / ((s.vocab + h - 1) / h);
  at::Tensor logits = at::randn({chunk, s.vocab}, opts);
  const at::Tensor labels = at::randint(s.vocab, {chunk}, opts.dtype(at::kLong));
  at::Tensor loss = at::empty({chunk}, opts.dtype(at::kFloat));
  row("loss chunk cross-entropy (" + std::to_string(chunk) + " rows)", 2.0 * chunk * s.vocab * e,
      [&] { kernels::cross_entropy_grad_in_place(logits, labels, loss); },
      [&] { reference::cross_entropy_grad_in_place(logits, labels, loss); });
}

}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("bench_fused_kernels: no GPU, nothing measured\n");
    return 0;
  }
  bench({"qwen3-0.6b", 1024, 3072, 16, 8, 128, 151936}, 16384);
  bench({"qwen3-1.7b", 2048, 6144, 16, 8, 128, 151936}, 16384);
  return 0;
}
