#include "engine/model/rope.hpp"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

namespace spplan::engine {
namespace {

constexpr double kPi = 3.141592653589793;

at::Tensor exponents(int64_t d, c10::Device device) {
  return at::arange(0, d, 2, at::TensorOptions().dtype(at::kFloat).device(device)) / static_cast<double>(d);
}

// 1 / base^(2i / d), i < d/2: the unscaled frequencies (compute_default_rope_parameters: a
// Python float base, so a scalar power).
at::Tensor base_inv_freq(double base, int64_t d, c10::Device device) { return 1.0 / at::pow(base, exponents(d, device)); }
// The same with dynamic NTK's base, a float32 tensor there.
at::Tensor base_inv_freq(const at::Tensor& base, int64_t d, c10::Device device) {
  return 1.0 / at::pow(base, exponents(d, device));
}

// _compute_dynamic_ntk_parameters with seq_len the tensor max(position_ids) + 1: float32 arithmetic.
at::Tensor dynamic_inv_freq(const ModelSpec& m, int64_t seq_len, c10::Device device) {
  const int64_t d = m.head_dim, mpe = m.max_position_embeddings;
  const double factor = m.rope_scaling.factor;
  if (seq_len <= mpe) return base_inv_freq(m.rope_theta, d, device);  // never grown
  const at::Tensor s = at::scalar_tensor(seq_len, at::TensorOptions().dtype(at::kLong).device(device));
  const at::Tensor ratio = (factor * s / static_cast<double>(mpe)) - (factor - 1);
  const at::Tensor base = m.rope_theta * at::pow(ratio, static_cast<double>(d) / static_cast<double>(d - 2));
  return base_inv_freq(base, d, device);
}

// _compute_llama3_parameters: long wavelengths divided by factor, short ones kept, a smooth
// blend between.
at::Tensor llama3_inv_freq(const ModelSpec& m, c10::Device device) {
  const RopeScaling& r = m.rope_scaling;
  const at::Tensor inv_freq = base_inv_freq(m.rope_theta, m.head_dim, device);
  const double old_context = static_cast<double>(r.original_max_position_embeddings);
  const double low_wavelen = old_context / r.low_freq_factor, high_wavelen = old_context / r.high_freq_factor;
  const at::Tensor wavelen = 2 * kPi / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_wavelen, inv_freq / r.factor, inv_freq);
  const at::Tensor smooth = (old_context / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const at::Tensor medium = (wavelen < high_wavelen).logical_not() * (wavelen > low_wavelen).logical_not();
  return at::where(medium, smoothed, scaled);
}

double yarn_mscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// _compute_yarn_parameters: interpolated (divided by factor) below the correction range,
// extrapolated (kept) above it, a linear ramp between; cos and sin scaled by the attention factor.
RopeFrequencies yarn(const ModelSpec& m, c10::Device device) {
  const RopeScaling& r = m.rope_scaling;
  const int64_t d = m.head_dim;
  const double base = m.rope_theta, dim = static_cast<double>(d);
  double attention_factor = r.attention_factor;
  if (attention_factor <= 0) {
    attention_factor = r.mscale > 0 && r.mscale_all_dim > 0
                           ? yarn_mscale(r.factor, r.mscale) / yarn_mscale(r.factor, r.mscale_all_dim)
                           : yarn_mscale(r.factor, 1.0);
  }
  const auto correction_dim = [&](double rotations) {
    return dim * std::log(static_cast<double>(r.original_max_position_embeddings) / (rotations * 2 * kPi)) /
           (2 * std::log(base));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1);
  if (low == high) high += 0.001;  // as transformers: no division by zero
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor pos_freqs = at::pow(base, exponents(d, device));
  const at::Tensor extrapolation = 1.0 / pos_freqs, interpolation = 1.0 / (r.factor * pos_freqs);
  const at::Tensor ramp = at::clamp((at::arange(d / 2, f32) - low) / (high - low), 0, 1);
  const at::Tensor extrapolation_factor = 1 - ramp;
  return {interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor, attention_factor};
}

}  // namespace

RopeFrequencies rope_frequencies(const ModelSpec& spec, int64_t seq_len, c10::Device device) {
  ModelSpec m = spec;  // every rule below over the rotated dimensions: the head's, or its rotated share
  m.head_dim = spec.rotary_dim();
  switch (m.rope_scaling.type) {
    case RopeType::kDefault: return {base_inv_freq(m.rope_theta, m.head_dim, device), 1.0};
    case RopeType::kLinear:
      return {base_inv_freq(m.rope_theta, m.head_dim, device) / m.rope_scaling.factor, 1.0};
    case RopeType::kDynamic: return {dynamic_inv_freq(m, seq_len, device), 1.0};
    case RopeType::kYarn: return yarn(m, device);
    case RopeType::kLlama3: return {llama3_inv_freq(m, device), 1.0};
  }
  return {};
}

std::pair<at::Tensor, at::Tensor> rope_tables(const RopeFrequencies& f, int64_t first, int64_t n) {
  const int64_t half = f.inv_freq.size(0);
  const at::Tensor positions = at::arange(first, first + n, f.inv_freq.options());
  const at::Tensor angles = positions.unsqueeze(1) * f.inv_freq.unsqueeze(0);  // [n, d/2]
  at::Tensor cos = angles.cos(), sin = angles.sin();
  if (f.attention_factor != 1.0) {
    cos = cos * f.attention_factor;
    sin = sin * f.attention_factor;
  }
  return {cos.view({1, n, 1, half}), sin.view({1, n, 1, half})};
}

std::pair<at::Tensor, at::Tensor> rope_tables_at(const RopeFrequencies& f, const at::Tensor& positions) {
  const int64_t b = positions.size(0), n = positions.size(1), half = f.inv_freq.size(0);
  const at::Tensor angles = positions.to(at::kFloat).unsqueeze(2) * f.inv_freq.view({1, 1, half});  // [b, n, d/2]
  at::Tensor cos = angles.cos(), sin = angles.sin();
  if (f.attention_factor != 1.0) {
    cos = cos * f.attention_factor;
    sin = sin * f.attention_factor;
  }
  return {cos.view({b, n, 1, half}), sin.view({b, n, 1, half})};
}

}  // namespace spplan::engine
