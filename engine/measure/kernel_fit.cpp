#include "engine/measure/kernel_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <Eigen/Dense>

namespace spplan::engine {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

double relative_rms(const std::vector<KernelSample>& samples, double fixed_s, double seconds_per_work) {
  double sum = 0;
  for (const KernelSample& p : samples) {
    const double e = (fixed_s + p.work * seconds_per_work - p.time_s) / p.time_s;
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(samples.size()));
}

Status check_samples(const std::string& what, const std::vector<KernelSample>& samples) {
  if (samples.size() < 2) {
    return Status::invalid(what + ": " + std::to_string(samples.size()) +
                           " measurement(s) (allowed: at least 2 sizes to fit time = fixed + work / rate)");
  }
  std::set<double> sizes;
  for (size_t i = 0; i < samples.size(); ++i) {
    const KernelSample& p = samples[i];
    if (!(std::isfinite(p.work) && p.work > 0) || !(std::isfinite(p.time_s) && p.time_s > 0)) {
      return Status::invalid(what + ": measurement " + std::to_string(i) + " has work " + num(p.work) + " and time " +
                             num(p.time_s) + " s (allowed: finite numbers > 0)");
    }
    sizes.insert(p.work);
  }
  if (sizes.size() < 2) {
    return Status::invalid(what + ": every measurement has work " + num(*sizes.begin()) +
                           " (allowed: at least 2 different sizes, to tell the rate from the fixed cost)");
  }
  return Status::ok();
}

}  // namespace

double KernelFit::efficiency(double peak_per_s) const {
  return peak_per_s > 0 ? std::min(1.0, rate_per_s / peak_per_s) : 0.0;
}

Result<KernelFit> fit_kernel(const std::string& what, const std::vector<KernelSample>& samples) {
  if (Status s = check_samples(what, samples); !s) return s;
  // Row i of  [1 / t_i, w_i / t_i] [fixed, 1 / rate]^T = 1 : the line's relative error at point i.
  // Work is scaled by its largest value so that both columns are near 1 (FLOPs reach 1e15).
  const auto n = static_cast<Eigen::Index>(samples.size());
  double w_max = 0;
  for (const KernelSample& p : samples) w_max = std::max(w_max, p.work);
  Eigen::MatrixXd a(n, 2);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const KernelSample& p = samples[static_cast<size_t>(i)];
    a(i, 0) = 1.0 / p.time_s;
    a(i, 1) = (p.work / w_max) / p.time_s;
  }
  const Eigen::Vector2d x = a.colPivHouseholderQr().solve(ones);
  KernelFit fit;
  fit.points = n;
  fit.fixed_s = x(0);
  double seconds_per_work = x(1) / w_max;
  if (fit.fixed_s < 0 || !(seconds_per_work > 0)) {
    // Noise (a loaded machine, a cache at the small sizes) can tilt the line below the origin or
    // flat; a negative fixed cost or a time that falls with work has no physical meaning, so fit
    // the rate alone: min sum (w_i s / t_i - 1)^2, positive whenever the points are. The residual
    // says how far the points are from any line.
    fit.through_origin = true;
    fit.fixed_s = 0;
    seconds_per_work = a.col(1).dot(ones) / a.col(1).squaredNorm() / w_max;
  }
  if (!(std::isfinite(seconds_per_work) && seconds_per_work > 0)) {
    return Status::internal(what + ": no rate could be fitted (slope " + num(seconds_per_work) + ")");
  }
  fit.rate_per_s = 1.0 / seconds_per_work;
  fit.residual_rel_rms = relative_rms(samples, fit.fixed_s, seconds_per_work);
  return fit;
}

double excess_units(const KernelFit& full, const std::vector<ExcessSample>& samples) {
  // Each point's error, relative: (time left past the counted work - x a_i) / t_i, with a_i one
  // unit's seconds; min over x of sum ((r_i - x a_i) / t_i)^2.
  double num_sum = 0, den_sum = 0;
  for (const ExcessSample& c : samples) {
    const double t = c.counted.time_s;
    const double left = t - full.fixed_s - c.counted.work / full.rate_per_s;
    const double a = c.work_per_unit / full.rate_per_s;
    num_sum += a * left / (t * t);
    den_sum += a * a / (t * t);
  }
  return den_sum > 0 ? std::max(0.0, num_sum / den_sum) : 0.0;
}

bool fits_agree(const SweepFits& a, const SweepFits& b, double tolerance) {
  auto close = [tolerance](double x, double y) { return std::abs(x / y - 1) <= tolerance; };
  return close(a.forward.rate_per_s, b.forward.rate_per_s) && close(a.backward.rate_per_s, b.backward.rate_per_s);
}

bool faster_sweep(const SweepFits& a, const SweepFits& b) {
  auto seconds_per_work = [](const SweepFits& f) { return 1 / f.forward.rate_per_s + 1 / f.backward.rate_per_s; };
  return seconds_per_work(a) < seconds_per_work(b);
}

}  // namespace spplan::engine
