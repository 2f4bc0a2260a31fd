// GPU presets and GPU TOML files -> GpuSpec.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "planner/config/loaders.hpp"
#include "planner/config/preset_path.hpp"
#include "planner/config/renter_settings.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/suggest.hpp"

namespace spplan {

// `base = "PRESET"`: the preset's spec, which the file's keys then override one by one (an H100
// with 96 GB is `base = "h100-80gb"` and `memory_gib = 96`). A preset only: a chain of files
// would hide where a number came from.
Result<std::optional<GpuSpec>> read_base(KeyReader* r) {
  std::string base;
  SPPLAN_RETURN_IF_ERROR(r->read_string("base", &base, false));
  if (base.empty()) return std::optional<GpuSpec>();
  const std::vector<std::string> presets = gpu_presets();
  if (std::find(presets.begin(), presets.end(), base) == presets.end()) {
    return Status::invalid(r->where("base") + ": value \"" + printable(base) + "\" is not a GPU preset" +
                           did_you_mean(base, presets) + " (allowed: " + join(presets) + ")");
  }
  SPPLAN_ASSIGN_OR_RETURN(GpuSpec spec, load_gpu(base));
  return std::optional<GpuSpec>(std::move(spec));
}

Result<GpuSpec> gpu_from_table(const std::string& source, const toml::table& table) {
  KeyReader r(source, table);
  SPPLAN_ASSIGN_OR_RETURN(const std::optional<GpuSpec> base, read_base(&r));
  GpuSpec g = base.value_or(GpuSpec{});
  g.name = std::filesystem::path(source).stem().string();
  if (base) g.base = base->name;
  // With a base every key is optional (the preset gave it); without one the file states them all.
  const bool need = !base.has_value();
  SPPLAN_RETURN_IF_ERROR(r.read_string("name", &g.name, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("memory_gib", &g.memory_gib, need));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("bf16_tflops", &g.bf16_tflops, need));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("fp32_tflops", &g.fp32_tflops, false));  // 0: not given
  SPPLAN_RETURN_IF_ERROR(r.read_positive("hbm_GBps", &g.hbm_GBps, need));
  SPPLAN_RETURN_IF_ERROR(r.read_int("gpus_per_node", &g.gpus_per_node, need, 1, 1 << 16));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("intra_node_GBps", &g.intra_node_GBps, need));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("inter_node_GBps", &g.inter_node_GBps, need));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("pcie_GBps", &g.pcie_GBps, need));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("host_memory_gib_per_node", &g.host_memory_gib_per_node, need));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("host_adam_params_per_s", &g.host_adam_params_per_s, need));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("nvme_GBps_per_node", &g.nvme_GBps_per_node, false));
  SPPLAN_RETURN_IF_ERROR(r.read_bounded("price_per_gpu_hour", &g.price_per_gpu_hour, need,  // as the price flags
                                        kRenterRanges.price_per_hour.min, kRenterRanges.price_per_hour.max));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("matmul_efficiency", &g.matmul_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("attention_efficiency", &g.attention_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("attention_bwd_efficiency", &g.attention_bwd_efficiency, false));
  if (need) {  // absent: SDPA runs at the flash rates (with a base: the base's SDPA rates)
    g.sdpa_attention_efficiency = g.attention_efficiency;
    g.sdpa_attention_bwd_efficiency = g.attention_bwd_efficiency;
  }
  SPPLAN_RETURN_IF_ERROR(r.read_positive("sdpa_attention_efficiency", &g.sdpa_attention_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("sdpa_attention_bwd_efficiency", &g.sdpa_attention_bwd_efficiency, false));
  if (need) {  // absent: fp32 runs at the bf16 fractions (with a base: the base's)
    g.fp32_matmul_efficiency = g.matmul_efficiency;
    g.fp32_attention_efficiency = g.attention_efficiency;
    g.fp32_attention_bwd_efficiency = g.attention_bwd_efficiency;
  }
  SPPLAN_RETURN_IF_ERROR(r.read_positive("fp32_matmul_efficiency", &g.fp32_matmul_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("fp32_attention_efficiency", &g.fp32_attention_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("fp32_attention_bwd_efficiency", &g.fp32_attention_bwd_efficiency, false));
  // Absent (0): a GEMM's backward runs at its forward's fraction in the same dtype (compute.cpp).
  SPPLAN_RETURN_IF_ERROR(r.read_positive("matmul_bwd_efficiency", &g.matmul_bwd_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("fp32_matmul_bwd_efficiency", &g.fp32_matmul_bwd_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("comm_efficiency", &g.comm_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("kernel_launch_s", &g.kernel_launch_s, false));
  SPPLAN_RETURN_IF_ERROR(r.read_positive("elementwise_efficiency", &g.elementwise_efficiency, false));
  // Absent (0): fp32 kernels at elementwise_efficiency (compute.cpp).
  SPPLAN_RETURN_IF_ERROR(r.read_positive("fp32_elementwise_efficiency", &g.fp32_elementwise_efficiency, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("matmul_fixed_s", &g.matmul_fixed_s, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("attention_fixed_s", &g.attention_fixed_s, false));
  if (need) g.attention_bwd_fixed_s = g.attention_fixed_s;  // absent: the forward's (with a base: the base's)
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("attention_bwd_fixed_s", &g.attention_bwd_fixed_s, false));
  if (need) {  // absent: the flash kernel's, as for the SDPA rates
    g.sdpa_attention_fixed_s = g.attention_fixed_s;
    g.sdpa_attention_bwd_fixed_s = g.attention_bwd_fixed_s;
  }
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("sdpa_attention_fixed_s", &g.sdpa_attention_fixed_s, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("sdpa_attention_bwd_fixed_s", &g.sdpa_attention_bwd_fixed_s, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("collective_latency_s", &g.collective_latency_s, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("attention_causal_extra_keys", &g.attention_causal_extra_keys, false));
  SPPLAN_RETURN_IF_ERROR(
      r.read_nonnegative("attention_bwd_causal_extra_keys", &g.attention_bwd_causal_extra_keys, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("attention_bias_extra_pairs", &g.attention_bias_extra_pairs, false));
  SPPLAN_RETURN_IF_ERROR(
      r.read_nonnegative("attention_bwd_bias_extra_pairs", &g.attention_bwd_bias_extra_pairs, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("cuda_context_gib", &g.cuda_context_gib, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("nccl_gib_per_group", &g.nccl_gib_per_group, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("allocator_fragmentation", &g.allocator_fragmentation, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("nccl_a2a_gib_per_peer", &g.nccl_a2a_gib_per_peer, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("gemm_workspace_mib", &g.gemm_workspace_mib, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("host_threads", &g.host_threads, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("matmul_thread_speedup", &g.matmul_thread_speedup, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("matmul_bwd_thread_speedup", &g.matmul_bwd_thread_speedup, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("bf16_matmul_thread_speedup", &g.bf16_matmul_thread_speedup, false));
  SPPLAN_RETURN_IF_ERROR(r.read_nonnegative("bf16_matmul_bwd_thread_speedup", &g.bf16_matmul_bwd_thread_speedup, false));
  SPPLAN_RETURN_IF_ERROR(r.check_no_unknown_keys());
  for (const auto& [key, value] :
       {std::pair{"matmul_efficiency", g.matmul_efficiency}, std::pair{"attention_efficiency", g.attention_efficiency},
        std::pair{"attention_bwd_efficiency", g.attention_bwd_efficiency},
        std::pair{"sdpa_attention_efficiency", g.sdpa_attention_efficiency},
        std::pair{"sdpa_attention_bwd_efficiency", g.sdpa_attention_bwd_efficiency},
        std::pair{"fp32_matmul_efficiency", g.fp32_matmul_efficiency},
        std::pair{"fp32_attention_efficiency", g.fp32_attention_efficiency},
        std::pair{"fp32_attention_bwd_efficiency", g.fp32_attention_bwd_efficiency},
        std::pair{"matmul_bwd_efficiency", g.matmul_bwd_efficiency},
        std::pair{"fp32_matmul_bwd_efficiency", g.fp32_matmul_bwd_efficiency},
        std::pair{"comm_efficiency", g.comm_efficiency},
        std::pair{"elementwise_efficiency", g.elementwise_efficiency},
        std::pair{"fp32_elementwise_efficiency", g.fp32_elementwise_efficiency}}) {
    if (value > 1.0) {
      return Status::invalid(r.where(key) + ": value " + format_number(value) +
                             " is not allowed (allowed: a fraction of peak in (0, 1])");
    }
  }
  return g;
}

namespace {
constexpr const char* kGpuFilesAllowed = "a GPU TOML file";
}  // namespace

Result<GpuSpec> load_gpu(std::string_view name_or_path, const std::string& flag) {
  SPPLAN_ASSIGN_OR_RETURN(const std::string path,
                          resolve_preset("gpus", flag, name_or_path, gpu_presets(), kGpuFilesAllowed));
  SPPLAN_ASSIGN_OR_RETURN(const toml::table table, parse_toml_file(path));
  return gpu_from_table(path, table);
}

std::vector<std::string> gpu_presets() { return list_presets("gpus"); }

Result<std::string> gpu_file(std::string_view name_or_path) {
  return resolve_preset("gpus", "--gpu", name_or_path, gpu_presets(), kGpuFilesAllowed);
}

}  // namespace spplan
