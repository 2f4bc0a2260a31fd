// Sizing a measurement by a time budget, so `calibrate` takes seconds on every CPU.
//
// A rate is only meaningful at a size whose call is long enough to time (milliseconds, not
// microseconds) and short enough to repeat. The same 2048^3 bf16 GEMM that takes 0.1 s on a CPU
// with AVX512-BF16 takes about 50 s where LibTorch emulates bf16 (AVX2 only): a fixed size is
// either too small for one machine or too slow for the other. time_within_budget() therefore
// grows the work from a small size until one call takes `target_s`, then keeps the best of a few
// calls at that size; the rate reported is the rate of the size that was measured.
//
// No LibTorch here: the caller times its own work (tests/engine/device/probe_budget_test.cpp drives it
// with synthetic timers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace spplan::engine {

struct ProbeBudget {
  int64_t first_size = 1;  // the smallest size tried
  int64_t last_size = 1;   // never grown past this (memory, or a size that is already representative)
  double target_s = 0.05;  // grow (doubling) until one call takes at least this long
  int reps = 3;            // further calls at the chosen size, the best one kept...
  double reps_cap_s = 1.0; // ...unless their sum would pass this
};

struct ProbeTiming {
  int64_t size = 0;     // the size the time belongs to
  double best_s = 0;    // the shortest call at that size
  double median_s = 0;  // the median of the calls at that size (sweep_within_budget): what a run
                        // repeating the kernel for minutes sees, where the best call is a lucky one
  int calls = 0;        // calls made in all, growth included
};

// The median of `times` (not empty).
inline double median_of(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

// `time_once(size)` runs the work once at `size` and returns its seconds (> 0).
template <class TimeOnce>
ProbeTiming time_within_budget(const ProbeBudget& b, TimeOnce&& time_once) {
  ProbeTiming r;
  r.size = std::max<int64_t>(1, b.first_size);
  double t = time_once(r.size);
  ++r.calls;
  while (t < b.target_s && r.size * 2 <= b.last_size) {
    r.size *= 2;
    t = time_once(r.size);
    ++r.calls;
  }
  // The call that chose the size is one sample; it also warmed the caches for the ones after it.
  r.best_s = t;
  double spent = t;
  for (int i = 0; i < b.reps && spent + r.best_s <= b.reps_cap_s; ++i) {
    const double ti = time_once(r.size);
    ++r.calls;
    spent += ti;
    r.best_s = std::min(r.best_s, ti);
  }
  return r;
}

// The same growth, keeping every size: the points a fit of time against size needs (kernel_fit.hpp).
// Sizes double from first_size while the last call took less than target_s (or fewer than 3 sizes
// were timed: a line needs two, and a third keeps one noisy point from setting it) and the next
// size is within last_size; each size is timed 1 + reps
// times (the first call warms it) and keeps its best and its median, the reps cut short once their sum passes
// reps_cap_s. Three points unless last_size stops the doubling first. One untimed call at first_size comes
// first: a kernel's first call in a process loads code, starts threads and touches fresh pages, and
// a slow first point would tilt the line (even to a negative slope).
template <class TimeOnce>
std::vector<ProbeTiming> sweep_within_budget(const ProbeBudget& b, TimeOnce&& time_once) {
  std::vector<ProbeTiming> points;
  int64_t size = std::max<int64_t>(1, b.first_size);
  (void)time_once(size);
  while (true) {
    ProbeTiming p{size, time_once(size), 0, 1};
    std::vector<double> times{p.best_s};
    double spent = p.best_s;
    for (int i = 0; i < b.reps && spent + p.best_s <= b.reps_cap_s; ++i) {
      const double ti = time_once(size);
      ++p.calls;
      spent += ti;
      p.best_s = std::min(p.best_s, ti);
      times.push_back(ti);
    }
    p.median_s = median_of(times);
    points.push_back(p);
    if ((p.best_s >= b.target_s && points.size() >= 3) || size * 2 > b.last_size) break;
    size *= 2;
  }
  return points;
}

}  // namespace spplan::engine
