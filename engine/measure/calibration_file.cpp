#include "engine/measure/calibration_file.hpp"

#include <cstdio>
#include <sstream>

namespace spplan::engine {
namespace {

constexpr double kTera = 1e12, kGiga = 1e9;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * fraction);
  return buf;
}

// "fit of 12 points, residual 2.3 %, fixed 8.1e-06 s"
std::string fit_words(const KernelFit& f) {
  return "fit of " + std::to_string(f.points) + " points, residual " + pct(f.residual_rel_rms) + ", fixed " +
         num(f.fixed_s) + " s" + (f.through_origin ? " (refitted through 0)" : "");
}

// One "key = value  # comment" line.
void line(std::ostringstream& t, const char* key, double value, const std::string& comment) {
  t << key << " = " << num(value) << (comment.empty() ? "" : "  # " + comment) << "\n";
}

// Each attention sweep's rate by sequence length (TFLOP/s of the pairs attended: s^2 / 2 causal,
// s^2 non-causal), forward / backward: how far a short call (a ring's block) falls from a long one.
std::string attention_by_length_table(const Calibration& c) {
  std::ostringstream t;
  auto rate = [](double flops, double s) { return s > 0 ? num(flops / s / kTera) : std::string("-"); };
  for (const Calibration::AttentionByLength& a : c.attention_by_length) {
    t << "attention by length (" << a.dtype << ", " << a.heads
      << " heads; TFLOP/s of the pairs attended, forward / backward; the last sweep's points):\n";
    for (const AttentionTimes& p : a.points) {
      const double full = p.full_fwd_flops, bwd = kAttentionBwdOverFwdFlops;
      t << "  d " << p.head_dim << ", " << p.seq << " tokens: causal " << rate(full / 2, p.causal_fwd_s) << " / "
        << rate(bwd * full / 2, p.causal_bwd_s) << ", non-causal " << rate(full, p.full_fwd_s) << " / "
        << rate(bwd * full, p.full_bwd_s);
      if (p.biased_fwd_s > 0) t << ", biased " << rate(full, p.biased_fwd_s) << " / " << rate(bwd * full, p.biased_bwd_s);
      t << "\n";
    }
  }
  return t.str();
}

}  // namespace

GpuSpec calibrated_spec(const Calibration& c) {
  GpuSpec g = c.base;
  g.name = c.name;
  g.matmul_efficiency = c.gemm_bf16.fit.efficiency(g.bf16_tflops * kTera);
  g.fp32_matmul_efficiency = c.gemm_fp32.fit.efficiency(g.fp32_tflops * kTera);
  g.matmul_bwd_efficiency = c.gemm_bwd_bf16.fit.efficiency(g.bf16_tflops * kTera);
  g.fp32_matmul_bwd_efficiency = c.gemm_bwd_fp32.fit.efficiency(g.fp32_tflops * kTera);
  g.matmul_fixed_s = (c.cuda ? c.gemm_bf16 : c.gemm_fp32).fit.fixed_s;
  g.attention_efficiency = c.attention_fwd.fit.efficiency(g.bf16_tflops * kTera);
  g.attention_bwd_efficiency = c.attention_bwd.fit.efficiency(g.bf16_tflops * kTera);
  g.fp32_attention_efficiency = c.attention_fwd_fp32.fit.efficiency(g.fp32_tflops * kTera);
  g.fp32_attention_bwd_efficiency = c.attention_bwd_fp32.fit.efficiency(g.fp32_tflops * kTera);
  // The intercept of the dtype the engine runs in (bf16 on a GPU, fp32 on a CPU), as matmul_fixed_s.
  g.attention_fixed_s = (c.cuda ? c.attention_fwd : c.attention_fwd_fp32).fit.fixed_s;
  g.attention_bwd_fixed_s = (c.cuda ? c.attention_bwd : c.attention_bwd_fp32).fit.fixed_s;
  // The engine's kernel is the one measured; the written file has no SDPA keys, which read as these.
  g.sdpa_attention_fixed_s = g.attention_fixed_s;
  g.sdpa_attention_bwd_fixed_s = g.attention_bwd_fixed_s;
  g.attention_causal_extra_keys = c.causal_extra_keys;
  g.attention_bwd_causal_extra_keys = c.causal_bwd_extra_keys;
  g.attention_bias_extra_pairs = c.bias_extra_pairs;
  g.attention_bwd_bias_extra_pairs = c.bias_bwd_extra_pairs;
  g.elementwise_efficiency = c.elementwise_pooled.fit.efficiency(g.hbm_GBps * kGiga);
  if (c.elementwise_fp32) g.fp32_elementwise_efficiency = c.elementwise_fp32->fit.efficiency(g.hbm_GBps * kGiga);
  g.kernel_launch_s = c.launch_s;
  g.pcie_GBps = c.copy_pooled.fit.rate_per_s / kGiga;
  g.host_adam_params_per_s = c.host_adam.fit.rate_per_s;
  if (!c.cuda) {
    g.host_threads = static_cast<double>(c.threads);
    auto speedup = [](const FittedKernel& all, const std::optional<FittedKernel>& one) {
      return one ? all.fit.rate_per_s / one->fit.rate_per_s : 0.0;  // 0: not measured
    };
    g.matmul_thread_speedup = speedup(c.gemm_fp32, c.gemm_fp32_one_thread);
    g.matmul_bwd_thread_speedup = speedup(c.gemm_bwd_fp32, c.gemm_bwd_fp32_one_thread);
    g.bf16_matmul_thread_speedup = speedup(c.gemm_bf16, c.gemm_bf16_one_thread);
    g.bf16_matmul_bwd_thread_speedup = speedup(c.gemm_bwd_bf16, c.gemm_bwd_bf16_one_thread);
  }
  if (c.cuda_context_gib) g.cuda_context_gib = *c.cuda_context_gib;
  if (c.gemm_workspace_mib) g.gemm_workspace_mib = *c.gemm_workspace_mib;
  return g;
}

std::string calibration_toml(const Calibration& c) {
  const GpuSpec g = calibrated_spec(c);
  const std::string base = "from " + c.base_from;
  std::ostringstream t;
  t << "# " << c.device << ", measured by `spplan calibrate` in " << num(c.seconds) << " s.\n"
    << "# Each measured key names its measurement; each fit is time = fixed_s + work / rate by least\n"
    << "# squares (relative error), efficiency = rate / peak. Other keys: " << base << ".\n"
    << "name = \"" << g.name << "\"\n";
  for (const std::string& w : c.warnings) t << "# warning: " << w << "\n";
  line(t, "memory_gib", g.memory_gib, base);
  line(t, "bf16_tflops", g.bf16_tflops, base);
  line(t, "fp32_tflops", g.fp32_tflops, base);
  line(t, "hbm_GBps", g.hbm_GBps, base);
  t << "gpus_per_node = " << g.gpus_per_node << "  # " << base << "\n";
  line(t, "intra_node_GBps", g.intra_node_GBps, base);
  line(t, "inter_node_GBps", g.inter_node_GBps, base);
  line(t, "host_memory_gib_per_node", g.host_memory_gib_per_node, base);
  line(t, "nvme_GBps_per_node", g.nvme_GBps_per_node, base);
  line(t, "price_per_gpu_hour", g.price_per_gpu_hour, base);
  line(t, "comm_efficiency", g.comm_efficiency, base);
  line(t, "collective_latency_s", g.collective_latency_s, base);
  line(t, "nccl_gib_per_group", g.nccl_gib_per_group, base);
  line(t, "nccl_a2a_gib_per_peer", g.nccl_a2a_gib_per_peer, base);
  line(t, "allocator_fragmentation", g.allocator_fragmentation, base);
  t << "# --- measured ---\n";
  line(t, "matmul_efficiency", g.matmul_efficiency,
       c.gemm_bf16.what + ": " + num(c.gemm_bf16.fit.rate_per_s / kTera) + " TFLOP/s, " + fit_words(c.gemm_bf16.fit));
  line(t, "fp32_matmul_efficiency", g.fp32_matmul_efficiency,
       c.gemm_fp32.what + ": " + num(c.gemm_fp32.fit.rate_per_s / kTera) + " TFLOP/s, " + fit_words(c.gemm_fp32.fit));
  line(t, "matmul_bwd_efficiency", g.matmul_bwd_efficiency,
       c.gemm_bwd_bf16.what + ": " + num(c.gemm_bwd_bf16.fit.rate_per_s / kTera) + " TFLOP/s, " +
           fit_words(c.gemm_bwd_bf16.fit));
  line(t, "fp32_matmul_bwd_efficiency", g.fp32_matmul_bwd_efficiency,
       c.gemm_bwd_fp32.what + ": " + num(c.gemm_bwd_fp32.fit.rate_per_s / kTera) + " TFLOP/s, " +
           fit_words(c.gemm_bwd_fp32.fit));
  if (!c.cuda) {
    line(t, "host_threads", g.host_threads, "the threads every rate here was measured with");
    auto speedup = [&](const char* key, double value, const char* above, const std::optional<FittedKernel>& one) {
      if (!one) return;
      line(t, key, value, std::string("the ") + above + " above over " + one->what + ": " +
                              num(one->fit.rate_per_s / kTera) + " TFLOP/s, " + fit_words(one->fit));
    };
    speedup("matmul_thread_speedup", g.matmul_thread_speedup, "fp32 GEMM", c.gemm_fp32_one_thread);
    speedup("matmul_bwd_thread_speedup", g.matmul_bwd_thread_speedup, "fp32 GEMM backward", c.gemm_bwd_fp32_one_thread);
    speedup("bf16_matmul_thread_speedup", g.bf16_matmul_thread_speedup, "bf16 GEMM", c.gemm_bf16_one_thread);
    speedup("bf16_matmul_bwd_thread_speedup", g.bf16_matmul_bwd_thread_speedup, "bf16 GEMM backward",
            c.gemm_bwd_bf16_one_thread);
  }
  line(t, "matmul_fixed_s", g.matmul_fixed_s, std::string("the intercept of the ") + (c.cuda ? "bf16" : "fp32") + " GEMM fit");
  auto attention = [&](const char* key, double value, const FittedKernel& k) {
    line(t, key, value, k.what + ": " + num(k.fit.rate_per_s / kTera) + " TFLOP/s, " + fit_words(k.fit));
  };
  attention("attention_efficiency", g.attention_efficiency, c.attention_fwd);
  attention("attention_bwd_efficiency", g.attention_bwd_efficiency, c.attention_bwd);
  attention("fp32_attention_efficiency", g.fp32_attention_efficiency, c.attention_fwd_fp32);
  attention("fp32_attention_bwd_efficiency", g.fp32_attention_bwd_efficiency, c.attention_bwd_fp32);
  line(t, "attention_fixed_s", g.attention_fixed_s,
       std::string("the intercept of the ") + (c.cuda ? "bf16" : "fp32") + " forward attention fit");
  line(t, "attention_bwd_fixed_s", g.attention_bwd_fixed_s,
       std::string("the intercept of the ") + (c.cuda ? "bf16" : "fp32") + " backward attention fit");
  line(t, "attention_causal_extra_keys", g.attention_causal_extra_keys,
       "keys a row of the " + c.causal_what + " computes past its diagonal, against the forward fit");
  line(t, "attention_bwd_causal_extra_keys", g.attention_bwd_causal_extra_keys,
       "the same against the backward fit");
  line(t, "attention_bias_extra_pairs", g.attention_bias_extra_pairs,
       "what a pair of the " + c.bias_what + " costs more, in pairs, against the forward fit");
  line(t, "attention_bwd_bias_extra_pairs", g.attention_bwd_bias_extra_pairs, "the same against the backward fit");
  for (const FittedKernel& k : c.elementwise) {
    t << "# elementwise: " << k.what << ": " << num(k.fit.rate_per_s / kGiga) << " GB/s, " << fit_words(k.fit) << "\n";
  }
  line(t, "elementwise_efficiency", g.elementwise_efficiency,
       c.elementwise_pooled.what + ": " + num(c.elementwise_pooled.fit.rate_per_s / kGiga) + " GB/s of hbm_GBps, " +
           fit_words(c.elementwise_pooled.fit));
  if (c.elementwise_fp32) {
    const FittedKernel& k = *c.elementwise_fp32;
    line(t, "fp32_elementwise_efficiency", g.fp32_elementwise_efficiency,
         k.what + ": " + num(k.fit.rate_per_s / kGiga) + " GB/s of hbm_GBps, " + fit_words(k.fit));
  }
  line(t, "kernel_launch_s", g.kernel_launch_s, c.launch_what);
  for (const FittedKernel& k : c.copies) {
    t << "# copy: " << k.what << ": " << num(k.fit.rate_per_s / kGiga) << " GB/s, " << fit_words(k.fit) << "\n";
  }
  line(t, "pcie_GBps", g.pcie_GBps, c.copy_pooled.what + ", " + fit_words(c.copy_pooled.fit));
  line(t, "host_adam_params_per_s", g.host_adam_params_per_s, c.host_adam.what + ", " + fit_words(c.host_adam.fit));
  const std::string mem = c.cuda_context_gib ? c.memory_what : base;
  line(t, "cuda_context_gib", g.cuda_context_gib, mem);
  line(t, "gemm_workspace_mib", g.gemm_workspace_mib, mem);
  return t.str();
}

std::string fit_report(const Calibration& c) {
  std::ostringstream t;
  auto row = [&](const FittedKernel& k, double unit, const char* unit_name, double peak) {
    t << "  " << k.what << ": fixed " << num(k.fit.fixed_s) << " s, rate " << num(k.fit.rate_per_s / unit) << " "
      << unit_name;
    if (peak > 0) t << " (" << pct(k.fit.rate_per_s / peak) << " of peak)";
    t << ", residual " << pct(k.fit.residual_rel_rms) << " (" << k.fit.points << " points)\n";
  };
  const GpuSpec& g = c.base;
  t << "fits (time = fixed + work / rate):\n";
  row(c.gemm_bf16, kTera, "TFLOP/s", g.bf16_tflops * kTera);
  row(c.gemm_fp32, kTera, "TFLOP/s", g.fp32_tflops * kTera);
  row(c.gemm_bwd_bf16, kTera, "TFLOP/s", g.bf16_tflops * kTera);
  row(c.gemm_bwd_fp32, kTera, "TFLOP/s", g.fp32_tflops * kTera);
  for (const auto* one : {&c.gemm_fp32_one_thread, &c.gemm_bwd_fp32_one_thread, &c.gemm_bf16_one_thread,
                          &c.gemm_bwd_bf16_one_thread}) {
    if (*one) row(**one, kTera, "TFLOP/s", 0);
  }
  row(c.attention_fwd, kTera, "TFLOP/s", g.bf16_tflops * kTera);
  row(c.attention_bwd, kTera, "TFLOP/s", g.bf16_tflops * kTera);
  row(c.attention_fwd_fp32, kTera, "TFLOP/s", g.fp32_tflops * kTera);
  row(c.attention_bwd_fp32, kTera, "TFLOP/s", g.fp32_tflops * kTera);
  t << "  causal attention: " << num(c.causal_extra_keys) << " keys a row past the diagonal forward, "
    << num(c.causal_bwd_extra_keys) << " backward (" << c.causal_what << ")\n";
  t << "  attention under a bias: " << num(c.bias_extra_pairs) << " pairs more a pair forward, "
    << num(c.bias_bwd_extra_pairs) << " backward (" << c.bias_what << ")\n";
  for (const FittedKernel& k : c.elementwise) row(k, kGiga, "GB/s", g.hbm_GBps * kGiga);
  row(c.elementwise_pooled, kGiga, "GB/s", g.hbm_GBps * kGiga);
  if (c.elementwise_fp32) row(*c.elementwise_fp32, kGiga, "GB/s", g.hbm_GBps * kGiga);
  for (const FittedKernel& k : c.copies) row(k, kGiga, "GB/s", 0);
  row(c.host_adam, 1e9, "G params/s", 0);
  t << attention_by_length_table(c);
  for (const std::string& u : c.unfitted) t << "  not fitted (printed only; its points are in the pooled fit): " << u << "\n";
  for (const std::string& w : c.warnings) t << "  warning: " << w << "\n";
  return t.str();
}

}  // namespace spplan::engine
