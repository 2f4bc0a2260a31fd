#include "engine/measure/validate_report.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "engine/run/predict.hpp"
#include "planner/core/units.hpp"

namespace spplan::engine {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Mean and max |error| over the rows that have `key`.
Errors errors(const nlohmann::json& rows, const std::string& key) {
  Errors e;
  double sum = 0;
  for (const auto& r : rows) {
    if (!r.contains(key) || !r[key].is_number()) continue;
    const double d = std::abs(r[key].get<double>());
    sum += d;
    e.max = std::max(e.max, d);
    ++e.n;
  }
  if (e.n > 0) e.mean = sum / e.n;
  return e;
}

// Signed mean error per kernel class over the rows that timed them (CaseSummary).
std::map<std::string, double> kernel_class_errors(const nlohmann::json& rows) {
  constexpr double kMinShareOfStep = 0.02;  // a class this small is noise in the step, not a rate
  std::map<std::string, std::pair<double, int>> sums;
  for (const auto& r : rows) {
    if (!r.contains("measured_kernel_classes_s") || !r.contains("predicted_kernel_classes_s")) continue;
    const double step = r.value("measured_step_time_s", 0.0);
    for (const auto& [cls, predicted] : r["predicted_kernel_classes_s"].items()) {
      const double measured = r["measured_kernel_classes_s"].value(cls, 0.0);
      if (!(measured > kMinShareOfStep * step) || !predicted.is_number()) continue;
      sums[cls].first += 100.0 * (predicted.get<double>() - measured) / measured;
      ++sums[cls].second;
    }
  }
  std::map<std::string, double> out;
  for (const auto& [cls, s] : sums) out[cls] = s.first / s.second;
  return out;
}

// A timed row's cp degree and its knobs without --cp; nullopt for a row without a step time.
struct RowLayout {
  int64_t cp = 1;
  nlohmann::json knobs = nlohmann::json::array();
};
std::optional<RowLayout> timed_layout(const nlohmann::json& r) {
  if (r.contains("error") || r.value("memory_only", false) || !r.contains("measured_step_time_s") ||
      !r.contains("predicted_step_time_s") || !r.contains("knobs") || !r.contains("sp")) {
    return std::nullopt;
  }
  RowLayout l;
  const nlohmann::json& knobs = r["knobs"];
  for (size_t i = 0; i < knobs.size(); ++i) {
    if (knobs[i] == "--cp" && i + 1 < knobs.size()) {
      l.cp = std::stoll(knobs[++i].get<std::string>());
    } else {
      l.knobs.push_back(knobs[i]);
    }
  }
  return l;
}

}  // namespace

std::vector<RingPair> ring_pairs(const nlohmann::json& rows) {
  std::vector<RingPair> out;
  for (const auto& ring : rows) {
    const std::optional<RowLayout> r = timed_layout(ring);
    if (!r || r->cp == 1) continue;
    for (const auto& ulysses : rows) {
      const std::optional<RowLayout> u = timed_layout(ulysses);
      if (!u || u->cp != 1 || u->knobs != r->knobs || ulysses.value("model", "") != ring.value("model", "") ||
          ulysses.value("seq", 0) != ring.value("seq", 0) || ulysses.value("world", 0) != ring.value("world", 0) ||
          ulysses["sp"].get<int64_t>() != ring["sp"].get<int64_t>() * r->cp) {
        continue;
      }
      RingPair pair{ring["case"], ulysses["case"]};
      pair.measured_ratio = ring["measured_step_time_s"].get<double>() / ulysses["measured_step_time_s"].get<double>();
      pair.predicted_ratio = ring["predicted_step_time_s"].get<double>() / ulysses["predicted_step_time_s"].get<double>();
      pair.error_pct = 100.0 * (pair.predicted_ratio - pair.measured_ratio) / pair.measured_ratio;
      out.push_back(pair);
      break;
    }
  }
  return out;
}

CaseSummary summarize_cases(const nlohmann::json& rows) {
  CaseSummary s;
  for (const auto& r : rows) {
    r.contains("error") ? ++s.failed : ++s.ok;
    if (r["expect"] != "runs") {
      ++s.boundary;
      s.boundary_right += !r.contains("error");
    }
  }
  s.mem = errors(rows, "mem_error_pct"), s.time = errors(rows, "time_error_pct");
  s.host = errors(rows, "host_mem_error_pct");
  s.preset_mem = errors(rows, "preset_mem_error_pct"), s.preset_time = errors(rows, "preset_time_error_pct");
  s.kernel_class_mean_error_pct = kernel_class_errors(rows);
  s.ring_pairs = ring_pairs(rows);
  return s;
}

nlohmann::json priced_rates(const GpuSpec& g) {
  nlohmann::json j = {{"fp32_attention_fwd_tflops", g.fp32_tflops * g.fp32_attention_efficiency},
                      {"fp32_attention_bwd_tflops", g.fp32_tflops * g.fp32_attention_bwd_efficiency},
                      {"bf16_attention_fwd_tflops", g.bf16_tflops * g.attention_efficiency},
                      {"bf16_attention_bwd_tflops", g.bf16_tflops * g.attention_bwd_efficiency},
                      {"memory_GBps", g.hbm_GBps}};
  // GEMMs and memory-bound kernels at the costmodel's own rates, its fallbacks applied (a backward
  // or an fp32 class not measured runs at the forward's or the bf16 one's).
  for (const auto& [dtype, elem_bytes] : {std::pair{"fp32_", kFp32Bytes}, std::pair{"bf16_", kBf16Bytes}}) {
    const std::optional<DtypeRates> r = priced_dtype_rates(g, elem_bytes);
    if (!r) continue;
    j[std::string(dtype) + "gemm_tflops"] = r->gemm_flops_per_s / kTera;
    j[std::string(dtype) + "gemm_bwd_tflops"] = r->gemm_bwd_flops_per_s / kTera;
    // The bf16 one keeps its old name: elementwise_efficiency is the bf16 key.
    j[elem_bytes == kBf16Bytes ? "elementwise_GBps" : "fp32_elementwise_GBps"] = r->elementwise_bytes_per_s / kGB;
  }
  return j;
}

void print_table(const nlohmann::json& rows, const CaseSummary& sum, const Machines& m) {
  const bool preset = m.preset.has_value();
  if (!m.device.empty()) std::printf("device: %s\n", m.device.c_str());
  const nlohmann::json r = priced_rates(m.calibrated);
  auto at = [&](const char* key) { return r.value(key, 0.0); };  // 0: a build without the costmodel
  std::printf("priced with %s: GEMM %.4g / %.4g, attention %.4g / %.4g TFLOP/s, elementwise %.4g GB/s (fp32, "
              "forward / backward; bf16 %.4g / %.4g, %.4g / %.4g, %.4g)\n",
              m.calibrated.name.c_str(), at("fp32_gemm_tflops"), at("fp32_gemm_bwd_tflops"),
              at("fp32_attention_fwd_tflops"), at("fp32_attention_bwd_tflops"), at("fp32_elementwise_GBps"),
              at("bf16_gemm_tflops"), at("bf16_gemm_bwd_tflops"), at("bf16_attention_fwd_tflops"),
              at("bf16_attention_bwd_tflops"), at("elementwise_GBps"));
  int width = 4;  // the longest case name
  for (const auto& r : rows) width = std::max(width, static_cast<int>(r["case"].get<std::string>().size()));
  std::printf("%-*s %12s %12s %8s %10s %10s %8s %8s", width, "case", "meas MiB", "pred MiB", "d %", "meas s", "pred s",
              "d %", "host d %");
  std::printf(preset ? " %10s %10s\n" : "\n", "preset m%", "preset t%");
  for (const auto& r : rows) {
    const std::string name = r["case"].get<std::string>();
    const bool memory_only = r.value("memory_only", false);
    if (r.contains("error") || (!memory_only && !r.contains("measured_step_time_s"))) {
      std::printf("%-*s %s\n", width, name.c_str(),
                  r.contains("error") ? r["error"].get<std::string>().c_str() : "out of memory, as expected");
      continue;
    }
    char host[32] = "       -";
    if (r.contains("host_mem_error_pct")) std::snprintf(host, sizeof host, "%+8.1f", r["host_mem_error_pct"].get<double>());
    std::printf("%-*s %12.1f %12.1f %+8.1f ", width, name.c_str(), r["measured_peak_memory_bytes"].get<double>() / kMiB,
                r["predicted_peak_memory_bytes"].get<double>() / kMiB, r["mem_error_pct"].get<double>());
    if (memory_only) {  // one step, memory only (validate_cases.hpp): no time columns
      std::printf("%10s %10s %8s %s", "-", "-", "-", host);
    } else {
      std::printf("%10.3f %10.3f %+8.1f %s", r["measured_step_time_s"].get<double>(),
                  r["predicted_step_time_s"].get<double>(), r["time_error_pct"].get<double>(), host);
    }
    if (preset) {
      std::printf(" %+10.1f %+10.1f", r["preset_mem_error_pct"].get<double>(), r["preset_time_error_pct"].get<double>());
    }
    std::printf("\n");
  }
  std::printf("mean |delta|: memory %.1f %%, time %.1f %%; max |delta|: memory %.1f %%, time %.1f %%, host memory "
              "%.1f %% (%d cases",
              sum.mem.mean, sum.time.mean, sum.mem.max, sum.time.max, sum.host.max, sum.ok);
  std::printf(sum.failed ? ", %d failed)\n" : ")\n", sum.failed);
  if (preset) {
    std::printf("with the preset: mean |delta| memory %.1f %%, time %.1f %%; max memory %.1f %%, time %.1f %%\n",
                sum.preset_mem.mean, sum.preset_time.mean, sum.preset_mem.max, sum.preset_time.max);
  }
  if (sum.boundary > 0) std::printf("boundary: %d of %d cases right\n", sum.boundary_right, sum.boundary);
  if (!sum.kernel_class_mean_error_pct.empty()) {
    std::printf("time by kernel class, predicted against timed inside the runs (mean delta):");
    for (const auto& [cls, pct] : sum.kernel_class_mean_error_pct) std::printf(" %s %+.1f %%", cls.c_str(), pct);
    std::printf("\n");
  }
  if (!sum.ring_pairs.empty()) std::printf("ring against Ulysses at equal degree (step time ratio):\n");
  for (const RingPair& p : sum.ring_pairs) {
    std::printf("  %s / %s: measured %.3f, predicted %.3f (%+.1f %%)\n", p.ring.c_str(), p.ulysses.c_str(),
                p.measured_ratio, p.predicted_ratio, p.error_pct);
  }
}

nlohmann::json summary_json(const CaseSummary& s, const Machines& m, const nlohmann::json& rows) {
  nlohmann::json j = {{"cases", s.ok},
                      {"failed", s.failed},
                      {"max_mem_error_pct", s.mem.max},
                      {"max_time_error_pct", s.time.max},
                      {"max_host_mem_error_pct", s.host.max},
                      {"mean_mem_error_pct", s.mem.mean},
                      {"mean_time_error_pct", s.time.mean},
                      {"machine", m.calibrated.name},
                      {"device", m.device},
                      {"priced_with", priced_rates(m.calibrated)},
                      {"boundary_cases", s.boundary},
                      {"boundary_right", s.boundary_right},
                      {"kernel_class_mean_error_pct", s.kernel_class_mean_error_pct},
                      {"rows", rows}};
  nlohmann::json pairs = nlohmann::json::array();
  for (const RingPair& p : s.ring_pairs) {
    pairs.push_back({{"ring", p.ring},
                     {"ulysses", p.ulysses},
                     {"measured_ratio", p.measured_ratio},
                     {"predicted_ratio", p.predicted_ratio},
                     {"error_pct", p.error_pct}});
  }
  j["ring_vs_ulysses"] = pairs;
  if (m.preset) {
    j.update({{"preset", m.preset->name},
              {"preset_max_mem_error_pct", s.preset_mem.max},
              {"preset_max_time_error_pct", s.preset_time.max},
              {"preset_mean_mem_error_pct", s.preset_mem.mean},
              {"preset_mean_time_error_pct", s.preset_time.mean}});
  }
  return j;
}

}  // namespace spplan::engine
