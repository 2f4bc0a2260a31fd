#include "engine/run/predict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "planner/costmodel/host_run.hpp"
#ifdef SPPLAN_ENGINE_HAVE_COSTMODEL
#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/step_costs.hpp"
#endif

namespace spplan::engine {
namespace {

std::optional<double> positive(double v) {
  return (std::isfinite(v) && v > 0) ? std::optional<double>(v) : std::nullopt;
}

#ifdef SPPLAN_ENGINE_HAVE_COSTMODEL
// StepCosts summed into kernel_clock.hpp's classes: the layers' GEMMs, attention forward
// (recompute included) and backward, their elementwise kernels with the embedding's, the head
// with the loss, and the optimizer's compute.
std::map<std::string, double> kernel_classes_s(const costmodel::StepCosts& c) {
  const double micro = static_cast<double>(c.micro_steps), layers = static_cast<double>(c.layers);
  auto gemm = [](const costmodel::LayerPassCosts& p) { return p.qkv_s + p.out_proj_s + p.mlp_s; };
  return {{"gemm", micro * layers * (gemm(c.forward) + gemm(c.recompute) + gemm(c.backward))},
          {"attention_fwd", micro * layers * (c.forward.attention_s + c.recompute.attention_s)},
          {"attention_bwd", micro * layers * c.backward.attention_s},
          {"elementwise", micro * (layers * (c.forward.norm_s + c.recompute.norm_s + c.backward.norm_s +
                                             c.forward.cp_merge_s + c.recompute.cp_merge_s + c.backward.cp_merge_s) +
                                   c.embed_fwd_s + c.embed_bwd_s)},
          {"loss", micro * (c.loss_fwd_s + c.loss_bwd_s)},
          {"optimizer", c.optimizer_s}};
}
#endif

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<GpuSpec> match_gpu_preset(const CudaDevice& device, const std::vector<GpuSpec>& presets) {
  const std::string name = lower(device.name);
  const double gib = static_cast<double>(device.total_bytes) / (1024.0 * 1024.0 * 1024.0);
  for (const GpuSpec& g : presets) {
    const std::string model = lower(g.name.substr(0, g.name.find('-')));  // "h100" of "h100-80gb"
    // 2%: the presets hold nvidia-smi's figure; an 80 GB and a 40 GB part differ by 50%.
    if (!model.empty() && name.find(model) != std::string::npos && std::abs(gib - g.memory_gib) <= 0.02 * g.memory_gib) {
      return g;
    }
  }
  return std::nullopt;
}

Pricing cuda_pricing(const GpuSpec* gpu_flag, const CudaDevice& device, const GpuSpec& plan_gpu) {
  if (gpu_flag != nullptr) return {*gpu_flag, true};
  std::vector<GpuSpec> presets;
  for (const std::string& name : gpu_presets()) {
    if (auto g = load_gpu(name); g.ok()) presets.push_back(*g);
  }
  if (auto g = match_gpu_preset(device, presets)) return {*g, true};
  GpuSpec g = plan_gpu;  // its overhead terms; the device's capacity
  g.name = device.name + " (no preset matches: memory only)";
  g.memory_gib = static_cast<double>(device.total_bytes) / (1024.0 * 1024.0 * 1024.0);
  return {g, false};
}

Pricing cpu_pricing(const GpuSpec* gpu_flag, const GpuSpec& plan_gpu) {
  if (gpu_flag != nullptr) return {*gpu_flag, true};
  bool calibrated = false;
  GpuSpec g = costmodel::this_cpu_host(plan_gpu, &calibrated);
  return {g, calibrated};
}

int64_t threads_per_rank(int64_t ranks_on_host) {
  if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp != nullptr) {
    char* end = nullptr;
    const long n = std::strtol(omp, &end, 10);
    if (end != omp && *end == '\0' && n > 0) return n;
  }
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max<int64_t>(1, cores / std::max<int64_t>(1, ranks_on_host));
}

PlanSpec priced_plan(const PlanSpec& plan, const Pricing& pricing) {
  PlanSpec host = plan;
  host.cluster.gpu = pricing.gpu;
  host.cluster.gpu.gpus_per_node = plan.cluster.num_gpus;  // all ranks on this one machine
  host.stack = trainer_stack("engine");  // the engine's own software behaviour (knobs.cpp)
  // On a CPU the threads this run's ranks really run (OMP_NUM_THREADS or the cores split).
  host.stack.cpu_flash_threads =
      pricing.threads_per_rank > 0 ? pricing.threads_per_rank : threads_per_rank(plan.cluster.num_gpus);
  return costmodel::as_priced(host);
}

Prediction predict(const PlanSpec& plan, const Pricing& pricing) {
  Prediction out;
  const PlanSpec host = priced_plan(plan, pricing);
  out.machine = host.cluster.gpu.name;
#ifdef SPPLAN_ENGINE_HAVE_COSTMODEL
  const costmodel::Estimate e = costmodel::estimate(host);
  const costmodel::MemoryBreakdown& m = e.memory;
  out.peak_memory_bytes = positive(m.total_bytes() - m.overhead_bytes);
  out.device_memory_bytes = positive(m.needed_bytes());
  out.host_memory_bytes = e.host.total_bytes() / static_cast<double>(host.cluster.num_gpus);
  if (pricing.speed_known) {
    out.step_time_s = positive(e.time.step_time_s);
    if (out.step_time_s && e.mfu > 0 && std::isfinite(e.mfu)) out.mfu_step_s = e.mfu * e.time.step_time_s;
    out.kernel_classes_s = kernel_classes_s(costmodel::step_costs(host));
  }
  out.memory_bytes = {{"params_bytes", m.params_bytes},       {"grads_bytes", m.grads_bytes},
                      {"optimizer_bytes", m.optimizer_bytes}, {"activations_bytes", m.activations_bytes},
                      {"logits_bytes", m.logits_bytes},       {"buffers_bytes", m.buffers_bytes},
                      {"overhead_bytes", m.overhead_bytes}};
#endif
  return out;
}

std::optional<ElementwiseWork> elementwise_work(const PlanSpec& plan) {
#ifdef SPPLAN_ENGINE_HAVE_COSTMODEL
  // The class priced at unit rates (compute.hpp elementwise_time_s: bytes / bandwidth + launches x
  // launch cost): at 1 byte/s and free launches its seconds are its bytes; at an unbounded
  // bandwidth and 1 s a launch, its launches. The formulas stay in the costmodel.
  auto priced_at = [&](double bytes_per_s, double launch_s) {
    Pricing unit{plan.cluster.gpu, true};
    unit.gpu.hbm_GBps = bytes_per_s / kGB;
    unit.gpu.elementwise_efficiency = unit.gpu.fp32_elementwise_efficiency = 1;
    unit.gpu.kernel_launch_s = launch_s;
    return kernel_classes_s(costmodel::step_costs(priced_plan(plan, unit))).at("elementwise");
  };
  return ElementwiseWork{priced_at(1, 0), priced_at(1e300, 1)};
#else
  (void)plan;
  return std::nullopt;
#endif
}

std::optional<DtypeRates> priced_dtype_rates(const GpuSpec& gpu, double elem_bytes) {
#ifdef SPPLAN_ENGINE_HAVE_COSTMODEL
  return DtypeRates{costmodel::gemm_flops_per_s(gpu, elem_bytes), costmodel::gemm_bwd_flops_per_s(gpu, elem_bytes),
                    costmodel::elementwise_bytes_per_s(gpu, elem_bytes)};
#else
  (void)gpu, (void)elem_bytes;
  return std::nullopt;
#endif
}

}  // namespace spplan::engine
