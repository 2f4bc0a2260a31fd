#include "engine/measure/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <torch/cuda.h>

#include "engine/device/memory_meter.hpp"
#include "engine/device/probe_budget.hpp"
#include "engine/measure/calibrate_flags.hpp"
#include "engine/measure/calibrate_layer.hpp"
#include "engine/measure/calibrate_probes.hpp"
#include "engine/measure/calibration_file.hpp"
#include "engine/parallel/comm.hpp"
#include "engine/run/predict.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/machine.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

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

double mem_total_gib() { return machine_ram_bytes().value_or(0.0) / (1024.0 * 1024.0 * 1024.0); }

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

// --- the command ---------------------------------------------------------------------------------

namespace {

struct Flags {
  std::string out_path;
  std::string gpu;                  // --gpu: the base spec on a CUDA device
  std::vector<std::string> models;  // --model: whose GEMM shapes to measure
};

Result<Flags> parse_flags(int argc, char** argv) {
  auto args = parse_flags_only(argc, argv, 2, calibrate_flag_specs(), "spplan-engine calibrate",
                               "spplan calibrate --help");
  if (!args.ok()) return args.status();
  Flags f;
  f.out_path = args->get("out").value_or("");
  f.gpu = args->get("gpu").value_or("");
  if (auto v = args->get("model")) {
    for (std::string& name : split(*v, ",")) {
      if (!name.empty()) f.models.push_back(std::move(name));  // "a,,b" and a trailing comma name nothing
    }
  }
  return f;
}

Result<FittedKernel> fitted(const std::string& what, const std::vector<KernelSample>& samples) {
  auto fit = fit_kernel(what, samples);
  // Not the user's input: the measurement itself was unusable (exit 1).
  if (!fit.ok()) return Status::internal("spplan-engine calibrate: " + fit.status().message());
  return FittedKernel{what, *fit};
}

// Every sample of `named`, pooled.
std::vector<KernelSample> pooled(const std::vector<NamedSamples>& named) {
  std::vector<KernelSample> all;
  for (const NamedSamples& n : named) all.insert(all.end(), n.samples.begin(), n.samples.end());
  return all;
}

std::string range(int64_t first, int64_t last) { return std::to_string(first) + "-" + std::to_string(last); }

// How far two sweeps of a kernel class (attention, GEMMs) may differ and still agree, and how many
// calibrate makes at most (kernel_fit.hpp agreed_sweep; a 2-vCPU VM): within the 11 % four attention
// calibrations of one hour agreed, outside the 25-30 % a loaded sweep was off.
constexpr double kSweepAgreement = 0.10;
constexpr int kMaxSweeps = 3;
// Every other rate (the other dtype, the one-thread GEMMs, the pooled and host fits) is measured
// twice and the two compared: a third sweep of each tripled calibrate's time under ctest -j2 (over
// 280 s of CPU on the 2-core EPYC) for rates the engine's own runs do not lean on.
constexpr int kCheckSweeps = 2;

// "" after one sweep; how many were made and whether two agreed after several (agreed_sweep).
std::string sweeps_words(const SweepFits& fits) {
  if (fits.sweeps <= 1) return "";
  return fits.agreed ? ", 2 of " + std::to_string(fits.sweeps) + " sweeps agreed"
                     : ", the fastest of " + std::to_string(fits.sweeps) + " sweeps (none agreed)";
}

// "0.076, 2.51 and 1.9 TFLOP/s": each sweep's rate of one direction.
std::string rates_words(const std::vector<double>& rates, double unit, const char* unit_name) {
  std::string words;
  for (size_t i = 0; i < rates.size(); ++i) {
    words += (i == 0 ? "" : i + 1 == rates.size() ? " and " : ", ") + format_number(rates[i] / unit);
  }
  return words + " " + unit_name;
}

// agreed_sweep at calibrate's tolerance, at most `max_sweeps` (kMaxSweeps or kCheckSweeps), a
// failure named as calibrate's. Every rate is measured at least twice; sweeps that never agree
// leave a warning in `warnings` naming `what` and each sweep's rates (printed at once, and kept in
// the file's comments).
template <class Sweep>
Result<SweepFits> swept(const std::string& what, int max_sweeps, double unit, const char* unit_name,
                        std::vector<std::string>* warnings, Sweep&& sweep) {
  auto fits = agreed_sweep(max_sweeps, kSweepAgreement, sweep);
  if (!fits.ok()) return Status::internal("spplan-engine calibrate: " + fits.status().message());
  if (!fits->agreed) {
    std::string w = what + ": " + std::to_string(fits->sweeps) + " sweeps disagree by more than " +
                    format_number(100 * kSweepAgreement) + " %: forward " +
                    rates_words(fits->forward_rates, unit, unit_name);
    if (fits->backward_rates != fits->forward_rates) w += ", backward " + rates_words(fits->backward_rates, unit, unit_name);
    w += "; the fastest is kept (another process slowed the others?); calibrate again on an idle machine";
    std::cerr << "spplan-engine calibrate: warning: " << w << std::endl;
    warnings->push_back(w);
  }
  return fits;
}

// One fit (not a forward/backward pair) swept as the pairs are.
template <class Samples>
Result<FittedKernel> swept_fit(const std::string& what, double unit, const char* unit_name,
                               std::vector<std::string>* warnings, Samples&& samples) {
  auto sweep = [&]() -> Result<SweepFits> {
    SPPLAN_ASSIGN_OR_RETURN(const KernelFit f, fit_kernel(what, samples()));
    return SweepFits::of(f, f);
  };
  SPPLAN_ASSIGN_OR_RETURN(const SweepFits fits, swept(what, kCheckSweeps, unit, unit_name, warnings, sweep));
  return FittedKernel{what + sweeps_words(fits), fits.forward};
}

// One dtype's GEMM classes, forward and backward (as autograd runs it: other layouts, their own
// rates), and where their fits on one thread go (CPU).
struct GemmDtype {
  at::ScalarType dtype;
  std::string name;  // "bf16"
  FittedKernel *forward, *backward;
  std::optional<FittedKernel> *forward_one_thread, *backward_one_thread;
};
std::vector<GemmDtype> gemm_dtypes(Calibration* c) {
  return {{at::kBFloat16, "bf16", &c->gemm_bf16, &c->gemm_bwd_bf16, &c->gemm_bf16_one_thread, &c->gemm_bwd_bf16_one_thread},
          {at::kFloat, "fp32", &c->gemm_fp32, &c->gemm_bwd_fp32, &c->gemm_fp32_one_thread, &c->gemm_bwd_fp32_one_thread}};
}

// A dtype's forward and backward GEMM fits on the current threads, swept `max_sweeps` times at most
// until two sweeps agree (as attention: the fp32 GEMM fits of four calibrations on one 2-vCPU VM
// spread from 0.11 to 0.16 TFLOP/s).
Result<SweepFits> gemm_fits(const std::vector<ModelSpec>& models, const GemmDtype& k, c10::Device device,
                            const ProbeScale& scale, const std::string& what, int max_sweeps,
                            std::vector<std::string>* warnings) {
  auto sweep = [&]() -> Result<SweepFits> {
    SPPLAN_ASSIGN_OR_RETURN(const KernelFit f,
                            fit_kernel(k.name + " GEMM", gemm_samples(models, k.dtype, GemmPass::kForward, device, scale)));
    SPPLAN_ASSIGN_OR_RETURN(const KernelFit b, fit_kernel(k.name + " GEMM backward",
                                                          gemm_samples(models, k.dtype, GemmPass::kBackward, device, scale)));
    return SweepFits::of(f, b);
  };
  return swept(what, max_sweeps, kTera, "TFLOP/s", warnings, sweep);
}

// The kernel measurements both devices share, fitted. Leaves base, name, device and memory to the caller.
Result<Calibration> measure_kernels(c10::Device device, const std::vector<ModelSpec>& models, const ProbeScale& scale) {
  Calibration c;
  c.cuda = device.is_cuda();
  const at::ScalarType act = c.cuda ? at::kBFloat16 : at::kFloat;  // the GPU runs bf16, the CPU engine fp32
  std::string shapes;
  for (const ModelSpec& m : models) shapes += (shapes.empty() ? "" : ", ") + m.name;
  const std::string gemm_shapes = ", the step's QKV/O/MLP/LM head GEMMs of " + shapes + ", " +
                                  range(scale.gemm_tokens_first, scale.gemm_tokens_last) + " tokens";
  // Each dtype's forward and backward: the dtype the engine runs here until two sweeps agree, the
  // other twice, compared (a plan may train in either; swept once, a CPU's emulated bf16 rate read
  // 0.076 and 2.51 TFLOP/s on one machine unsaid).
  for (const GemmDtype& k : gemm_dtypes(&c)) {
    SPPLAN_ASSIGN_OR_RETURN(const SweepFits fits, gemm_fits(models, k, device, scale, k.name + " GEMM",
                                                            k.dtype == act ? kMaxSweeps : kCheckSweeps, &c.warnings));
    *k.forward = {k.name + " GEMM" + gemm_shapes + sweeps_words(fits), fits.forward};
    *k.backward = {k.name + " GEMM backward (input and weight gradients)" + gemm_shapes + sweeps_words(fits), fits.backward};
  }

  // Attention in each dtype, as the GEMMs: bf16 and fp32 kernels run at unrelated rates (tensor
  // cores against fp32 units on a GPU; emulated or native bf16 on a CPU).
  const int64_t heads = c.cuda ? 16 : 8, kv_heads = heads / 2;
  const std::vector<int64_t> dims = c.cuda ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{32};
  std::string dim_list;
  for (int64_t d : dims) dim_list += (dim_list.empty() ? "" : ",") + std::to_string(d);
  for (const at::ScalarType dtype : {at::kBFloat16, at::kFloat}) {
    // Both dtypes over the same sequences: the CPU flash kernel's rate rises with the sequence
    // (cpu_scale), and a bf16 sweep that stopped at 512 tokens priced the engine's 8K bf16 attention
    // 2x slow where bf16 is emulated (an AVX2 EPYC). Such a CPU reaches the budget at 2K tokens.
    const bool bf16 = dtype == at::kBFloat16;
    std::string backend;
    std::vector<AttentionTimes> points;  // the last sweep's, for the table by length
    // The rates are the non-causal calls' (every pair computed); the causal calls of the same sizes
    // give the keys a row computes past its diagonal, the biased ones what a pair under a bias
    // costs more (kernel_fit.hpp excess_units).
    auto sweep = [&]() -> Result<SweepFits> {
      const AttentionSamples attn = attention_samples(heads, kv_heads, dims, dtype, device, scale);
      SPPLAN_ASSIGN_OR_RETURN(const KernelFit f, fit_kernel("attention forward", attn.forward));
      SPPLAN_ASSIGN_OR_RETURN(const KernelFit b, fit_kernel("attention backward", attn.backward));
      backend = attn.backend;
      points = attn.points;
      SweepFits fits = SweepFits::of(f, b);
      fits.forward_extra_keys = excess_units(f, attn.causal_forward);
      fits.backward_extra_keys = excess_units(b, attn.causal_backward);
      fits.forward_bias_extra = excess_units(f, attn.biased_forward);
      fits.backward_bias_extra = excess_units(b, attn.biased_backward);
      return fits;
    };
    // Each dtype swept until two sweeps agree (above).
    SPPLAN_ASSIGN_OR_RETURN(const SweepFits fits,
                            swept(std::string(bf16 ? "bf16" : "fp32") + " attention",
                                  dtype == act ? kMaxSweeps : kCheckSweeps, kTera, "TFLOP/s", &c.warnings, sweep));
    const std::string what = " (SDPA " + backend + "), " + (bf16 ? "bf16" : "fp32") + ", " + std::to_string(heads) +
                             "/" + std::to_string(kv_heads) + " heads, d " + dim_list + ", " +
                             range(scale.attn_seq_first, scale.attn_seq_last) + " tokens" + sweeps_words(fits);
    // Named references, not `(a ? b : c) = {...}`: g++ 13 (a GPU node's) refuses that assignment.
    // Field by field: it found no aggregate conversion for the braced list either.
    FittedKernel& forward = bf16 ? c.attention_fwd : c.attention_fwd_fp32;
    FittedKernel& backward = bf16 ? c.attention_bwd : c.attention_bwd_fp32;
    forward.what = "non-causal attention forward" + what;
    forward.fit = fits.forward;
    backward.what = "non-causal attention backward" + what;
    backward.fit = fits.backward;
    c.attention_by_length.push_back({bf16 ? "bf16" : "fp32", heads, points});
    if (dtype == act) {  // the keys are the engine's dtype's, as its fixed costs (calibration_file.hpp)
      c.causal_extra_keys = fits.forward_extra_keys;
      c.causal_bwd_extra_keys = fits.backward_extra_keys;
      c.bias_extra_pairs = fits.forward_bias_extra;
      c.bias_bwd_extra_pairs = fits.backward_bias_extra;
      c.causal_what = "causal calls of the sizes above (" + std::string(bf16 ? "bf16" : "fp32") + ")";
      c.bias_what = "non-causal calls under a zero [s, s] bias, " +
                    range(scale.attn_seq_first, std::min(scale.attn_seq_last, kBiasedSeqLast)) + " tokens (" +
                    (bf16 ? "bf16" : "fp32") + ")";
    }
  }

  // Each elementwise kernel and each copy direction is fitted for the report; only their pooled
  // fits become keys, so one kernel too noisy to fit on its own is reported, not fatal.
  auto fit_each = [&](const std::vector<NamedSamples>& named, std::vector<FittedKernel>* out) {
    for (const NamedSamples& n : named) {
      auto k = fitted(n.what, n.samples);
      k.ok() ? out->push_back(*k) : c.unfitted.push_back(k.status().message());
    }
  };
  // The pooled fits (the keys) swept as the compute classes; each kernel's own fit, printed only,
  // from the last sweep's points.
  std::vector<NamedSamples> elementwise;
  SPPLAN_ASSIGN_OR_RETURN(c.elementwise_pooled,
                          swept_fit("RMSNorm, RoPE, SwiGLU, upcast and copy pooled, " +
                                        range(scale.elementwise_first, scale.elementwise_last) + " elements",
                                    kGB, "GB/s", &c.warnings, [&] {
                                      elementwise = elementwise_samples(act, device, scale);
                                      return pooled(elementwise);
                                    }));
  fit_each(elementwise, &c.elementwise);
  c.launch_s = launch_overhead_s(device, &c.launch_what);
  std::vector<NamedSamples> copies;
  SPPLAN_ASSIGN_OR_RETURN(c.copy_pooled, swept_fit("copies above pooled, " + range(scale.copy_first, scale.copy_last) +
                                                       " bytes", kGB, "GB/s", &c.warnings, [&] {
                                                     copies = copy_samples(device, scale);
                                                     return pooled(copies);
                                                   }));
  fit_each(copies, &c.copies);
  SPPLAN_ASSIGN_OR_RETURN(c.host_adam, swept_fit("host fused AdamW, " + range(scale.adam_first, scale.adam_last) +
                                                     " fp32 parameters, all host threads",
                                                 1e9, "G params/s", &c.warnings, [&] { return host_adam_samples(scale); }));
  if (!c.cuda) {
    // Last: it installs the kernel clock, whose per-op callbacks stay on. The separate kernels'
    // pooled fit is still printed; the keys are the class as the engine's layer runs it, in each
    // dtype (a CPU without bf16 units converts every bf16 element to fp32 and back).
    c.elementwise.push_back(c.elementwise_pooled);
    auto layer_fit = [&](Precision precision) -> Result<FittedKernel> {
      const std::string what = "the engine's elementwise class in one " + models.front().name +
                               " layer, forward and backward (" + to_string(precision) + ", kernel clock)";
      int64_t last_tokens = scale.layer_tokens_first;
      auto sweep = [&]() -> Result<SweepFits> {
        SPPLAN_ASSIGN_OR_RETURN(const LayerSamples layer, layer_elementwise_samples(models.front(), scale, precision));
        last_tokens = layer.last_tokens;
        SPPLAN_ASSIGN_OR_RETURN(const KernelFit f, fit_kernel(what, layer.samples));
        return SweepFits::of(f, f);
      };
      SPPLAN_ASSIGN_OR_RETURN(const SweepFits fits, swept(what, kCheckSweeps, kGB, "GB/s", &c.warnings, sweep));
      return FittedKernel{what + ", " + range(scale.layer_tokens_first, last_tokens) +
                              " tokens, over the bytes the costmodel counts for it" + sweeps_words(fits),
                          fits.forward};
    };
    SPPLAN_ASSIGN_OR_RETURN(c.elementwise_fp32, layer_fit(Precision::kFp32));
    SPPLAN_ASSIGN_OR_RETURN(c.elementwise_pooled, layer_fit(Precision::kBf16));
  }
  return c;
}

// The fastest measured rate of a dtype's compute kernels, TFLOP/s.
double fastest_tflops(std::initializer_list<const FittedKernel*> kernels) {
  double best = 0;
  for (const FittedKernel* k : kernels) best = std::max(best, k->fit.rate_per_s / 1e12);
  return best;
}

// The CPU as the costmodel's accelerator: its measured rates are its peaks. A dtype's peak is its
// fastest kernel class, so every class's efficiency is at most 1: on a CPU that emulates bf16 the
// attention kernel (its own blocked loops) outruns the emulated bf16 GEMM (measured on an AVX2
// AMD EPYC: about 25 against 8 GFLOP/s), and a GEMM peak would cap attention at the GEMM's rate.
GpuSpec cpu_base(const Calibration& c, double a2a_GBps, double latency_s, int64_t cores) {
  GpuSpec g;
  g.name = "cpu-host";
  g.bf16_tflops = fastest_tflops({&c.gemm_bf16, &c.gemm_bwd_bf16, &c.attention_fwd, &c.attention_bwd});
  g.fp32_tflops = fastest_tflops({&c.gemm_fp32, &c.gemm_bwd_fp32, &c.attention_fwd_fp32, &c.attention_bwd_fp32});
  g.hbm_GBps = c.elementwise_pooled.fit.rate_per_s / 1e9;  // unless the copy alone was fitted:
  for (const FittedKernel& k : c.elementwise) {
    if (k.what == "copy") g.hbm_GBps = k.fit.rate_per_s / 1e9;
  }
  g.memory_gib = g.host_memory_gib_per_node = mem_total_gib();
  g.gpus_per_node = cores;
  g.intra_node_GBps = g.inter_node_GBps = a2a_GBps;
  g.comm_efficiency = 1.0;
  g.collective_latency_s = latency_s;
  g.price_per_gpu_hour = 0;
  // A CPU process has no CUDA context, NCCL buffers, cuBLAS workspace or caching-allocator slack.
  g.cuda_context_gib = g.nccl_gib_per_group = g.nccl_a2a_gib_per_peer = g.gemm_workspace_mib = 0;
  g.allocator_fragmentation = 0;
  return g;
}

// A GEMM's thread speedup (its rate on all threads over one) above the thread count, or below a
// half, is no machine's: one of its two measurements was taken while something else ran (a 5.85x
// speedup on 2 threads was written once). The one-thread fit is dropped with a warning,
// and the speedup is then taken as not measured (host_share's fallback).
constexpr double kSpeedupSlack = 1 + kSweepAgreement;
void drop_impossible_speedup(const std::string& what, const FittedKernel& all, std::optional<FittedKernel>* one,
                             int threads, std::vector<std::string>* warnings) {
  const double speedup = all.fit.rate_per_s / (*one)->fit.rate_per_s;
  if (speedup <= threads * kSpeedupSlack && speedup >= 0.5) return;
  const std::string w = what + ": " + format_number(all.fit.rate_per_s / kTera) + " TFLOP/s on " +
                        std::to_string(threads) + " threads and " + format_number((*one)->fit.rate_per_s / kTera) +
                        " TFLOP/s on one are a speedup of " + format_number(speedup) +
                        ", which " + std::to_string(threads) + " threads cannot give; the thread speedup is left out "
                        "(taken as not measured); calibrate again on an idle machine";
  std::cerr << "spplan-engine calibrate: warning: " << w << std::endl;
  warnings->push_back(w);
  one->reset();
}

// Gloo between 2 local ranks (fork/exec before this process starts its thread pools). 0 on failure.
void measure_gloo(int argc, char** argv, double* a2a_GBps, double* latency_s) {
  char tmpl[] = "/tmp/spplan-calibrate-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd >= 0) ::close(fd);
  ::setenv(kCommOutVar, tmpl, 1);
  const int rc = fd >= 0 ? launch_local(2, argc, argv) : 1;
  ::unsetenv(kCommOutVar);
  std::ifstream in(tmpl);
  if (rc != 0 || !(in >> *a2a_GBps >> *latency_s) || !(*a2a_GBps > 0)) *a2a_GBps = 0, *latency_s = 0;
  if (fd >= 0) ::unlink(tmpl);
}

Result<Calibration> calibrate_cpu(int argc, char** argv, const std::vector<ModelSpec>& models) {
  const int64_t cores = std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  double a2a_GBps = 0, latency_s = 0;
  measure_gloo(argc, argv, &a2a_GBps, &latency_s);
  const int threads = calibrate_uses_thread_cpu_time() ? 1 : static_cast<int>(cores);
  at::set_num_threads(threads);
  SPPLAN_ASSIGN_OR_RETURN(Calibration c, measure_kernels(c10::Device(c10::kCPU), models, cpu_scale()));
  c.threads = threads;
  if (threads > 1) {  // each GEMM class on one thread: host_share's threads per rank
    at::set_num_threads(1);
    for (const GemmDtype& k : gemm_dtypes(&c)) {
      auto one = gemm_fits(models, k, c10::Device(c10::kCPU), cpu_scale(), k.name + " GEMM on one thread", kCheckSweeps,
                           &c.warnings);
      if (!one.ok()) {
        c.unfitted.push_back(one.status().message());
        continue;
      }
      *k.forward_one_thread = FittedKernel{k.name + " GEMM on one thread, the shapes above" + sweeps_words(*one), one->forward};
      *k.backward_one_thread =
          FittedKernel{k.name + " GEMM backward on one thread, the shapes above" + sweeps_words(*one), one->backward};
      drop_impossible_speedup(k.name + " GEMM", *k.forward, k.forward_one_thread, threads, &c.warnings);
      drop_impossible_speedup(k.name + " GEMM backward", *k.backward, k.backward_one_thread, threads, &c.warnings);
    }
    at::set_num_threads(threads);
  }
  c.base = cpu_base(c, a2a_GBps, latency_s, cores);
  if (!(a2a_GBps > 0)) c.base.intra_node_GBps = c.base.inter_node_GBps = c.base.hbm_GBps;  // Gloo failed: copy rate
  c.base_from = "this CPU: GEMM and copy fits, /proc/meminfo, a 2-rank Gloo all-to-all" +
                std::string(a2a_GBps > 0 ? "" : " (failed: the copy rate instead)");
  c.device = "This machine's CPU (" + std::to_string(cores) + " threads) as the costmodel's accelerator";
  c.name = "cpu-host";
  return c;
}

Result<Calibration> calibrate_cuda(const Flags& flags, const std::vector<ModelSpec>& models) {
  const c10::Device device(c10::kCUDA, 0);
  std::string workspace_what, context_what;
  const double workspace_mib = gemm_workspace_mib(device, &workspace_what);  // first GEMM of the process
  const CudaDevice dev{cuda_device_name(0), cuda_memory(0).device_total_bytes};
  GpuSpec base;
  std::string base_from;
  if (!flags.gpu.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(base, load_gpu(flags.gpu, "--gpu"));
    base_from = "--gpu " + flags.gpu;
  } else {
    std::vector<GpuSpec> presets;
    for (const std::string& name : gpu_presets()) {
      if (auto g = load_gpu(name); g.ok()) presets.push_back(*g);
    }
    const auto matched = match_gpu_preset(dev, presets);
    if (!matched) {
      return Status::invalid("spplan-engine calibrate: device \"" + dev.name +
                             "\" matches no GPU preset by name and memory (allowed: --gpu PRESET|FILE.toml for its peaks)");
    }
    base = *matched;
    base_from = "preset " + base.name + " (matched to the device)";
  }
  SPPLAN_ASSIGN_OR_RETURN(Calibration c, measure_kernels(device, models, cuda_scale()));
  c.base = base;
  c.base_from = base_from;
  c.device = dev.name;
  c.name = base.name + "-measured";
  c.gemm_workspace_mib = workspace_mib;
  c.cuda_context_gib = cuda_context_gib(device, &context_what);
  c.memory_what = "context: " + context_what + "; workspace: " + workspace_what;
  return c;
}

}  // namespace

int calibrate_main(int argc, char** argv) {
  const auto t_start = Clock::now();
  auto flags = parse_flags(argc, argv);
  if (!flags.ok()) return bad_input(flags.status().message());
  if (const char* clock = std::getenv("SPPLAN_CALIBRATE_CLOCK");
      clock != nullptr && *clock != 0 && std::string(clock) != "cpu" && std::string(clock) != "wall") {
    return bad_input(std::string("spplan-engine calibrate: SPPLAN_CALIBRATE_CLOCK: value \"") + clock +
                     "\" is not allowed (allowed: wall, cpu)");
  }
  const bool cuda = torch::cuda::is_available();
  if (!cuda && !flags->gpu.empty()) {
    return bad_input("spplan-engine calibrate: --gpu " + flags->gpu +
                     ": there is no CUDA device (allowed: --gpu only where one is; a CPU's peaks are measured)");
  }
  if (flags->models.empty()) {
    flags->models = cuda ? std::vector<std::string>{"qwen3-0.6b", "llama-3.2-1b", "qwen3-1.7b", "qwen3-4b", "llama-3.1-8b"}
                         : std::vector<std::string>{"tiny-llama"};
  }
  std::vector<ModelSpec> models;
  for (const std::string& name : flags->models) {
    auto m = load_model(name, "--model");
    if (!m.ok()) return bad_input(m.status().message());
    models.push_back(*m);
  }
  Result<Calibration> c = Status::internal("not measured");
  try {
    c = cuda ? calibrate_cuda(*flags, models) : calibrate_cpu(argc, argv, models);
  } catch (const std::exception& e) {
    std::cerr << "spplan-engine calibrate: LibTorch failed: " << e.what() << "\n";
    return 1;
  }
  if (!c.ok()) {
    std::cerr << c.status().message() << "\n";
    return c.status().code() == Status::Code::kInvalidInput ? 2 : 1;
  }
  c->seconds = seconds_since(t_start);
  std::cerr << fit_report(*c);
  const std::string text = calibration_toml(*c);
  if (flags->out_path.empty()) {
    std::cout << text;
    return 0;
  }
  if (auto s = write_file_atomically(flags->out_path, text); !s) return bad_input("--out: " + s.message());
  std::cerr << "spplan-engine calibrate: wrote " << flags->out_path << "\n";
  return 0;
}


}  // namespace spplan::engine
