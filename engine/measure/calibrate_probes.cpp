#include "engine/measure/calibrate_probes.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <time.h>
#include <functional>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>
#ifdef SPPLAN_TORCH_HAS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

#include "engine/device/probe_budget.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/fused_kernels.hpp"

namespace spplan::engine {
namespace {

using Clock = std::chrono::steady_clock;

void sync(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One call of f, in seconds, between two synchronizations of the device; on a CPU in thread-CPU
// mode (calibrate_uses_thread_cpu_time) the calling thread's CPU time instead.
template <class F>
double timed(c10::Device device, F&& f) {
  if (!device.is_cuda() && calibrate_uses_thread_cpu_time()) {
    const double t0 = thread_cpu_s();
    f();
    return thread_cpu_s() - t0;
  }
  sync(device);
  const auto t0 = Clock::now();
  f();
  sync(device);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The budget of a sweep: up to 3 more calls per size, at most reps_cap_s of them.
ProbeBudget sweep(int64_t first, int64_t last, const ProbeScale& scale) {
  return {first, last, scale.target_s, scale.reps, scale.reps_cap_s};
}

// The median call of each size: a training run repeats its kernels for minutes, and the best of a
// few calls is the luckiest of them (a fit on best calls priced steps 5-15 % short).
void append(std::vector<KernelSample>* out, const std::vector<ProbeTiming>& points, double work_per_size) {
  for (const ProbeTiming& p : points) out->push_back({work_per_size * static_cast<double>(p.size), p.median_s});
}

at::TensorOptions on(c10::Device device, c10::ScalarType dtype) { return at::TensorOptions().device(device).dtype(dtype); }

// The linears of one training step of `m` and how often a step calls each: every layer's QKV
// (fused), O, MLP gate+up (fused) and down, and the LM head once.
struct StepLinear {
  int64_t in = 0, out = 0;
  double calls = 1;
};
std::vector<StepLinear> step_linears(const ModelSpec& m) {
  const double layers = static_cast<double>(m.num_hidden_layers);
  return {{m.hidden_size, m.q_dim() + 2 * m.kv_dim(), layers},
          {m.q_dim(), m.hidden_size, layers},
          {m.hidden_size, 2 * m.intermediate_size, layers},
          {m.intermediate_size, m.hidden_size, layers},
          {m.hidden_size, m.vocab_size, 1}};
}

}  // namespace

bool calibrate_uses_thread_cpu_time() {
  const char* v = std::getenv("SPPLAN_CALIBRATE_CLOCK");
  return v != nullptr && std::string(v) == "cpu";
}

ProbeScale cpu_scale() {
  ProbeScale s;
  s.gemm_tokens_first = 32;  // an emulated bf16 LM head of tiny-llama at 32 tokens: tens of ms
  s.target_s = 0.03, s.reps_cap_s = 0.2;  // 20-odd sweeps in 10-20 s, on a shared 2-core machine too
  s.gemm_target_s = 0.25;  // fp32 tiny-llama: 256 to 4096 tokens; emulated bf16: 32 to 128
  s.reps = 4;                             // 5 calls a size where they fit in the cap: a stable median
  // The engine's CPU cases run attention over 4K-16K tokens. LibTorch's CPU flash kernel reaches
  // 70 % of its 16K rate at 1K tokens and 85 % at 4K (one thread of an AMD EPYC Zen3: 33, 41 and
  // 49 GFLOP/s forward), so the sweep starts at 1K and grows until one call takes 0.5 s (8K on that
  // CPU with 2 threads; a slower CPU stops sooner).
  s.attn_seq_first = 1024, s.attn_seq_last = 16384;
  s.attn_target_s = 0.5, s.attn_reps_cap_s = 2.0;
  return s;
}

ProbeScale cuda_scale() {
  ProbeScale s;
  s.gemm_tokens_first = 512, s.gemm_tokens_last = 16384;
  // Attention from 1K to 64K tokens: a ring's blocks are S / cp long, and its short blocks' rate
  // against one long call is what the table by length shows (the H200 lease of 30 November,
  // validation/gpu/h200-141gb-2026-11-30/calibrate.log). A call of 0.2 s ends the
  // sweep: bf16 reaches 64K (a 16-head causal forward and backward there is about 0.15 s on an
  // H100-class GPU), fp32's memory-efficient kernel stops near 16K.
  s.attn_seq_first = 1024, s.attn_seq_last = 65536;
  s.elementwise_first = 1 << 20, s.elementwise_last = 1 << 28;
  s.copy_first = 1 << 22, s.copy_last = int64_t{1} << 31;
  s.adam_first = 1 << 22, s.adam_last = 1 << 27;
  s.target_s = 0.02;  // a GPU call of 20 ms is far past its ramp; keeps the sweep to seconds
  s.gemm_target_s = s.target_s;
  s.attn_target_s = 0.2, s.attn_reps_cap_s = s.reps_cap_s;
  return s;
}

std::vector<KernelSample> gemm_samples(const std::vector<ModelSpec>& models, c10::ScalarType dtype, GemmPass pass,
                                       c10::Device device, const ProbeScale& scale) {
  const bool backward = pass == GemmPass::kBackward;
  std::vector<KernelSample> out;
  for (const ModelSpec& m : models) {
    const std::vector<StepLinear> linears = step_linears(m);
    std::vector<at::Tensor> weights;
    double flops_per_token = 0, calls = 0;
    for (const StepLinear& l : linears) {
      weights.push_back(at::randn({l.out, l.in}, on(device, dtype)).requires_grad_(backward));
      flops_per_token += (backward ? 4.0 : 2.0) * l.calls * static_cast<double>(l.in * l.out);
      calls += l.calls;
    }
    auto step_gemms_s = [&](int64_t tokens) {
      double step_s = 0;
      for (size_t i = 0; i < linears.size(); ++i) {
        const at::Tensor& w = weights[i];
        const at::Tensor x = at::randn({1, tokens, linears[i].in}, on(device, dtype)).requires_grad_(backward);
        double call_s = 0;
        if (backward) {
          const at::Tensor y = at::linear(x, w);
          const at::Tensor dy = at::randn_like(y);
          // grad, not backward: nothing accumulates into w.grad, only the two products are timed.
          call_s = timed(device, [&] { (void)torch::autograd::grad({y}, {x, w}, {dy}, /*retain_graph=*/true); });
        } else {
          call_s = timed(device, [&] { (void)at::linear(x, w); });
        }
        step_s += linears[i].calls * call_s;
      }
      return step_s;
    };
    // Sized by time (ProbeScale::gemm_target_s): the first size doubles while a step's GEMMs there
    // (the second call: the first loads code) would take under a quarter of the target.
    int64_t first = scale.gemm_tokens_first;
    (void)step_gemms_s(first);
    for (double t = step_gemms_s(first); t * 8 <= scale.gemm_target_s && first * 8 <= scale.gemm_tokens_last; t *= 2) {
      first *= 2;
    }
    const ProbeBudget budget{first, scale.gemm_tokens_last, scale.gemm_target_s, scale.reps, scale.reps_cap_s};
    // Per GEMM call: the fit's intercept is then one call's fixed cost (calibrate_probes.hpp).
    for (const ProbeTiming& p : sweep_within_budget(budget, step_gemms_s)) {
      out.push_back({flops_per_token * static_cast<double>(p.size) / calls, p.median_s / calls});
    }
  }
  return out;
}

std::string sdpa_backend_name(int64_t backend) {
  switch (backend) {
    case 0: return "math";
    case 1: return "flash";
    case 2: return "memory-efficient";
    case 3: return "cuDNN";
    default: return "none (" + std::to_string(backend) + ")";
  }
}

AttentionSamples attention_samples(int64_t heads, int64_t kv_heads, const std::vector<int64_t>& head_dims,
                                   c10::ScalarType dtype, c10::Device device, const ProbeScale& scale) {
  AttentionSamples out;
  const bool packed = !device.is_cuda();
  for (const int64_t d : head_dims) {
    // q, k and v as the engine's attention gets them (calibrate_probes.hpp): views of one packed
    // buffer on a CPU, three tensors on a GPU.
    auto inputs = [&](int64_t s) {
      if (packed) {
        const at::Tensor qkv = at::randn({1, s, heads + 2 * kv_heads, d}, on(device, dtype)).requires_grad_(true);
        return std::array<at::Tensor, 3>{qkv.narrow(2, 0, heads), qkv.narrow(2, heads, kv_heads),
                                         qkv.narrow(2, heads + kv_heads, kv_heads)};
      }
      return std::array<at::Tensor, 3>{at::randn({1, s, heads, d}, on(device, dtype)).requires_grad_(true),
                                       at::randn({1, s, kv_heads, d}, on(device, dtype)).requires_grad_(true),
                                       at::randn({1, s, kv_heads, d}, on(device, dtype)).requires_grad_(true)};
    };
    {
      const auto [q, k, v] = inputs(scale.attn_seq_first);
      const int64_t native = at::_fused_sdp_choice(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), {}, 0.0,
                                                   true, std::nullopt, heads != kv_heads);
      out.backend = sdpa_backend_name(native) + (native == 0 && heads != kv_heads ? " (GQA; KV expanded)" : "");
    }
    const ProbeBudget budget{scale.attn_seq_first, scale.attn_seq_last, scale.attn_target_s, scale.reps,
                             scale.attn_reps_cap_s};
    const auto both = sweep_within_budget(budget, [&](int64_t s) {
      const auto [q, k, v] = inputs(s);
      const at::Tensor grad_out = at::randn({1, s, heads, d}, on(device, dtype));  // [b, s, h, d], as o_proj's backward gives it
      return timed(device, [&] { torch::autograd::backward({causal_attention(q, k, v)}, {grad_out}); });
    });
    for (const ProbeTiming& p : both) {
      const auto [q, k, v] = inputs(p.size);
      const at::Tensor grad_out = at::randn({1, p.size, heads, d}, on(device, dtype));
      // The median of the sweep's count of calls (ProbeTiming::calls), as its point was.
      auto median_calls = [&](const std::function<void()>& call) {
        std::vector<double> times;
        for (int i = 0; i < std::max(1, p.calls); ++i) times.push_back(timed(device, call));
        return median_of(times);
      };
      // A non-causal call's forward, and its backward as (forward + backward) less the forward,
      // under `bias` where one is given.
      auto non_causal = [&](const at::Tensor& bias) {
        const double fwd = median_calls([&] {
          at::NoGradGuard no_grad;
          (void)full_attention(q, k, v, bias);
        });
        const double fwd_and_bwd =
            median_calls([&] { torch::autograd::backward({full_attention(q, k, v, bias)}, {grad_out}); });
        return std::pair{fwd, std::max(0.0, fwd_and_bwd - fwd)};
      };
      AttentionTimes t{d, p.size};
      t.causal_fwd_s = median_calls([&] {
        at::NoGradGuard no_grad;
        (void)causal_attention(q, k, v);
      });
      // The accumulation into the inputs' gradients is elementwise and small next to attention.
      t.causal_bwd_s = std::max(0.0, p.median_s - t.causal_fwd_s);
      std::tie(t.full_fwd_s, t.full_bwd_s) = non_causal({});
      const double s = static_cast<double>(p.size);
      t.full_fwd_flops = 4.0 * static_cast<double>(heads * d) * s * s;
      const double full = t.full_fwd_flops, bwd = kAttentionBwdOverFwdFlops;
      if (p.size <= kBiasedSeqLast) {
        std::tie(t.biased_fwd_s, t.biased_bwd_s) = non_causal(at::zeros({p.size, p.size}, on(device, dtype)));
        out.biased_forward.push_back({{full, t.biased_fwd_s}, full});
        if (t.biased_bwd_s > 0) out.biased_backward.push_back({{bwd * full, t.biased_bwd_s}, bwd * full});
      }
      out.points.push_back(t);
      // A causal call's excess is counted in keys a row: a key per row is full / s.
      out.forward.push_back({full, t.full_fwd_s});
      out.causal_forward.push_back({{full / 2, t.causal_fwd_s}, full / s});
      if (t.full_bwd_s > 0) out.backward.push_back({bwd * full, t.full_bwd_s});
      if (t.causal_bwd_s > 0) out.causal_backward.push_back({{bwd * full / 2, t.causal_bwd_s}, bwd * full / s});
    }
  }
  return out;
}

std::vector<NamedSamples> elementwise_samples(c10::ScalarType dtype, c10::Device device, const ProbeScale& scale) {
  const double e = static_cast<double>(c10::elementSize(dtype));
  constexpr int64_t kWidth = 2048, kHeadDim = 128;  // a 1.7B model's hidden width, a Qwen3/Llama head
  const at::Tensor norm_w = at::ones({kWidth}, on(device, dtype));
  struct Kernel {
    std::string what;
    double bytes_per_elem;
    std::function<double(int64_t)> time_once;  // n elements
  };
  const std::vector<Kernel> kernels = {
      {"RMSNorm forward (the engine's, eager)", 2 * e,
       [&](int64_t n) {
         const at::Tensor x = at::randn({n / kWidth, kWidth}, on(device, dtype));
         return timed(device, [&] { (void)rms_normalize(x, norm_w, 1e-6, false); });
       }},
      {"RoPE forward (rotate-half, fp32 tables)", 2 * e,
       [&](int64_t n) {
         const int64_t tokens = n / kWidth;
         const at::Tensor x = at::randn({1, tokens, kWidth / kHeadDim, kHeadDim}, on(device, dtype));
         const at::Tensor c = at::randn({1, tokens, 1, kHeadDim / 2}, on(device, at::kFloat));
         const at::Tensor s = at::randn({1, tokens, 1, kHeadDim / 2}, on(device, at::kFloat));
         return timed(device, [&] {
           const at::Tensor x1 = x.narrow(3, 0, kHeadDim / 2), x2 = x.narrow(3, kHeadDim / 2, kHeadDim / 2);
           (void)at::cat({x1 * c - x2 * s, x2 * c + x1 * s}, 3);
         });
       }},
      {"SwiGLU forward (silu(gate) * up)", 3 * e,
       [&](int64_t n) {
         const at::Tensor g = at::randn({n}, on(device, dtype)), u = at::randn({n}, on(device, dtype));
         return timed(device, [&] { (void)(at::silu(g) * u); });
       }},
      // The logits are bf16 whatever the activations are (on a CPU, fp32 to fp32 would be no kernel).
      {"loss upcast of bf16 logits to fp32", 2 + 4,
       [&](int64_t n) {
         const at::Tensor x = at::randn({n}, on(device, at::kBFloat16));
         return timed(device, [&] { (void)x.to(at::kFloat); });
       }},
      {"copy", 2 * e,
       [&](int64_t n) {
         const at::Tensor x = at::randn({n}, on(device, dtype));
         at::Tensor y = at::empty_like(x);
         return timed(device, [&] { y.copy_(x); });
       }},
  };
  std::vector<NamedSamples> out;
  for (const Kernel& k : kernels) {
    NamedSamples named{k.what, {}};
    append(&named.samples, sweep_within_budget(sweep(scale.elementwise_first, scale.elementwise_last, scale), k.time_once),
           k.bytes_per_elem);
    out.push_back(std::move(named));
  }
  return out;
}

double launch_overhead_s(c10::Device device, std::string* what) {
  at::Tensor x = at::zeros({1}, on(device, at::kFloat));
  const at::Tensor y = at::ones({1}, on(device, at::kFloat));
  const ProbeTiming t = time_within_budget({1000, 1 << 20, 0.02, 2, 0.5}, [&](int64_t calls) {
    return timed(device, [&] {
      for (int64_t i = 0; i < calls; ++i) x.add_(y);
    });
  });
  *what = "a 1-element add, " + std::to_string(t.size) + " back to back, per call";
  return t.best_s / static_cast<double>(t.size);
}

std::vector<NamedSamples> copy_samples(c10::Device device, const ProbeScale& scale) {
  const ProbeBudget budget = sweep(scale.copy_first, scale.copy_last, scale);
  // n bytes as fp32 elements (a vectorised copy on every CPU), written once so that no page is
  // first touched inside a timed call.
  auto bytes = [](int64_t n, c10::Device d, bool pinned) {
    return at::zeros({n / 4}, at::TensorOptions().dtype(at::kFloat).device(d).pinned_memory(pinned));
  };
  std::vector<NamedSamples> out;
  if (!device.is_cuda()) {
    NamedSamples host{"host copy (no PCIe on a CPU: the offload copies are memory copies)", {}};
    append(&host.samples, sweep_within_budget(budget, [&](int64_t n) {
             const at::Tensor a = bytes(n, device, false);
             at::Tensor b = bytes(n, device, false);
             return timed(device, [&] { b.copy_(a); });
           }), 1.0);
    out.push_back(std::move(host));
    return out;
  }
  const c10::Device cpu(c10::kCPU);
  NamedSamples h2d{"pinned host-to-device copy", {}}, d2h{"device-to-host copy into pinned memory", {}};
  append(&h2d.samples, sweep_within_budget(budget, [&](int64_t n) {
           const at::Tensor host = bytes(n, cpu, true);
           at::Tensor dev = bytes(n, device, false);
           return timed(device, [&] { dev.copy_(host); });
         }), 1.0);
  append(&d2h.samples, sweep_within_budget(budget, [&](int64_t n) {
           at::Tensor host = bytes(n, cpu, true);
           const at::Tensor dev = bytes(n, device, false);
           return timed(device, [&] { host.copy_(dev); });
         }), 1.0);
  out.push_back(std::move(h2d));
  out.push_back(std::move(d2h));
  return out;
}

std::vector<KernelSample> host_adam_samples(const ProbeScale& scale) {
  const at::Tensor step = at::full({}, 1.0);
  const c10::Device cpu(c10::kCPU);
  std::vector<KernelSample> out;
  append(&out, sweep_within_budget(sweep(scale.adam_first, scale.adam_last, scale), [&](int64_t n) {
           at::Tensor p = at::randn({n}), g = at::randn({n}), m = at::zeros({n}), v = at::zeros({n});
           return timed(cpu, [&] {
             at::_fused_adamw_({p}, {g}, {m}, {v}, {}, {step}, 1e-3, 0.9, 0.999, 0.01, 1e-8, false, false);
           });
         }), 1.0);
  return out;
}

#ifdef SPPLAN_TORCH_HAS_CUDA
namespace {
// The caching allocator's current (allocated, reserved) bytes on `device`.
std::pair<double, double> allocator_bytes(c10::Device device) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  return {static_cast<double>(stats.allocated_bytes[0].current), static_cast<double>(stats.reserved_bytes[0].current)};
}
}  // namespace

double gemm_workspace_mib(c10::Device device, std::string* what) {
  const at::Tensor a = at::randn({256, 256}, on(device, at::kBFloat16)), b = at::randn({256, 256}, a.options());
  sync(device);
  const double before = allocator_bytes(device).first;
  { (void)at::mm(a, b); }  // the product is freed here; the handle's workspace stays
  sync(device);
  const double mib = (allocator_bytes(device).first - before) / (1024.0 * 1024.0);
  *what = "allocated bytes the first bf16 GEMM of the process left behind (cuBLAS/cuBLASLt workspace, one stream)";
  return std::max(0.0, mib);
}

double cuda_context_gib(c10::Device device, std::string* what) {
  sync(device);
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return 0;
  const double used = static_cast<double>(total_bytes - free_bytes);
  *what = "device memory in use (cudaMemGetInfo) less the caching allocator's reserved, after every kernel above ran";
  return std::max(0.0, used - allocator_bytes(device).second) / (1024.0 * 1024.0 * 1024.0);
}
#else
double gemm_workspace_mib(c10::Device, std::string* what) {
  *what = "no CUDA in this LibTorch";
  return 0;
}
double cuda_context_gib(c10::Device, std::string* what) {
  *what = "no CUDA in this LibTorch";
  return 0;
}
#endif

}  // namespace spplan::engine
