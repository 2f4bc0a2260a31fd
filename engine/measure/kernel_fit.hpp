// The time of one kernel class as a line in its work: time_s = fixed_s + work / rate, fitted by
// least squares over measurements at several sizes (`spplan calibrate`, CPU and CUDA alike).
//
// Why a line: a GEMM, an attention call or an elementwise kernel costs a fixed part (launch, the
// tile ramp, the last partial wave) plus a part proportional to its work (FLOPs or bytes) at the
// rate the hardware sustains once it is full. The asymptotic efficiency is rate / peak; at a
// finite size the achieved efficiency is work / (time * peak), lower by the fixed part.
//
// The fit minimises the *relative* error of each point (each row weighted by 1 / time): the
// measurements span orders of magnitude in time, and an absolute fit would let the largest call
// decide the line alone. The residual is the relative RMS of (fitted - measured) / measured.
//
// No LibTorch here: tests/engine/measure/kernel_fit_test.cpp checks it on synthetic lines.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan::engine {

struct KernelSample {
  double work = 0;    // FLOPs or bytes of one call, > 0
  double time_s = 0;  // seconds of one call, > 0
};

struct KernelFit {
  double fixed_s = 0;          // the intercept, >= 0
  double rate_per_s = 0;       // work per second once the fixed part is paid, > 0
  double residual_rel_rms = 0; // sqrt(mean(((fixed_s + work / rate) - time) / time)^2)
  int64_t points = 0;
  bool through_origin = false; // the best line had a negative intercept or a slope <= 0 (noise):
                               // refitted as the rate alone, fixed_s = 0
  // rate / peak (the asymptotic efficiency), kept in (0, 1]: a measured rate above a datasheet
  // peak (clock boost, a peak quoted low) is the peak.
  double efficiency(double peak_per_s) const;
};

// Fits `samples` of the kernel class `what` (named in the error messages).
// Fails (invalid) with fewer than 2 samples, a sample whose work or time is not a finite positive
// number, or fewer than 2 distinct work sizes (no slope can be told apart from the intercept).
Result<KernelFit> fit_kernel(const std::string& what, const std::vector<KernelSample>& samples);

// An attention call timed beside non-causal calls of its size (calibrate's attention), causal or
// under a bias: its time and the pairs it counts (in FLOPs), and the work of one unit of what it
// may cost beyond them: one more key for each of its rows (rows x a pair's FLOPs) for a causal
// call, its counted work itself for a biased one (the unit: one more pair a pair).
struct ExcessSample {
  KernelSample counted;
  double work_per_unit = 0;  // > 0
};

// A blockwise attention backward's FLOPs over its forward's (5 matmuls of s x s x d against 2), as
// the costmodel counts them (planner/costmodel/software_facts.hpp kAttentionBwdFlopsFactor, which
// this room may not include; a test holds the two equal).
inline constexpr double kAttentionBwdOverFwdFlops = 2.5;

// One size of calibrate's attention sweep: the median time of each of its calls (a backward is
// (forward + backward) - forward; 0 where that was not above the forward).
struct AttentionTimes {
  int64_t head_dim = 0, seq = 0;
  double causal_fwd_s = 0, causal_bwd_s = 0, full_fwd_s = 0, full_bwd_s = 0;
  double biased_fwd_s = 0, biased_bwd_s = 0;  // non-causal under a bias; 0: not timed at this length
  double full_fwd_flops = 0;  // a non-causal call's forward: 4 h d s^2 (a causal call attends to half)
};

// The units of excess work such calls show over the non-causal calls' fit `full` of the same
// kernel: the least-squares (relative error) x in
//   time = full.fixed_s + (counted.work + x work_per_unit) / full.rate_per_s,
// at least 0 (a call that ran faster a pair than the full ones: noise). 0 without samples.
// Causal calls: the keys a row computes past those it attends to (GpuSpec::
// attention_causal_extra_keys: the diagonal's key tiles run whole); biased calls: the pairs a pair
// under the bias costs more (GpuSpec::attention_bias_extra_pairs).
double excess_units(const KernelFit& full, const std::vector<ExcessSample>& samples);

// A forward and a backward fit from one sweep of a kernel (calibrate's attention).
struct SweepFits {
  KernelFit forward, backward;
  // Attention only: excess_units of the sweep's causal calls (keys a row) and biased calls (pairs
  // a pair), forward and backward.
  double forward_extra_keys = 0, backward_extra_keys = 0;
  double forward_bias_extra = 0, backward_bias_extra = 0;
  int sweeps = 1;       // sweeps made to get these
  bool agreed = false;  // two of them agreed within the tolerance, or one was asked for (else: the fastest)
  // Every sweep's rates, in the order made: what a warning shows when none agreed.
  std::vector<double> forward_rates, backward_rates;

  static SweepFits of(const KernelFit& forward, const KernelFit& backward) {
    SweepFits s;
    s.forward = forward;
    s.backward = backward;
    return s;
  }
};

// One sweep's rates move with whatever else shares the machine (on a shared 2-vCPU VM one
// whole attention sweep ran 25-30 % slow while four other calibrations that hour agreed within
// 11 %). So a sweep is repeated until two sweeps' forward and backward rates each agree within
// `tolerance` (relative), at most `max_sweeps` times. Of the two that agree the faster is kept
// (other load only slows a kernel); if none agree, the fastest sweep. Fast means the least
// forward + backward seconds per unit of work. `sweep()` returns Result<SweepFits>; its errors pass
// through. REQUIRES: max_sweeps >= 1.
bool fits_agree(const SweepFits& a, const SweepFits& b, double tolerance);
bool faster_sweep(const SweepFits& a, const SweepFits& b);

template <class Sweep>
Result<SweepFits> agreed_sweep(int max_sweeps, double tolerance, Sweep&& sweep) {
  std::vector<SweepFits> done;
  std::vector<double> forward_rates, backward_rates;
  auto finish = [&](SweepFits kept, int sweeps, bool agreed) {
    kept.sweeps = sweeps;
    kept.agreed = agreed;
    kept.forward_rates = forward_rates;
    kept.backward_rates = backward_rates;
    return kept;
  };
  for (int i = 1; i <= max_sweeps; ++i) {
    SPPLAN_ASSIGN_OR_RETURN(SweepFits next, sweep());
    forward_rates.push_back(next.forward.rate_per_s);
    backward_rates.push_back(next.backward.rate_per_s);
    for (const SweepFits& before : done) {
      if (fits_agree(next, before, tolerance)) return finish(faster_sweep(next, before) ? next : before, i, true);
    }
    done.push_back(next);
  }
  SweepFits kept = done.front();
  for (const SweepFits& f : done) kept = faster_sweep(f, kept) ? f : kept;
  return finish(kept, max_sweeps, max_sweeps == 1);
}

}  // namespace spplan::engine
