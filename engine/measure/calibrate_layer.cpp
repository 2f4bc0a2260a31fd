#include "engine/measure/calibrate_layer.hpp"

#include <chrono>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "engine/device/memory_meter.hpp"
#include "engine/device/probe_budget.hpp"
#include "engine/model/model.hpp"
#include "engine/parallel/comm.hpp"
#include "engine/run/kernel_clock.hpp"
#include "engine/run/predict.hpp"

namespace spplan::engine {
namespace {

// The plan the probe's model runs: one rank, no checkpointing, no ZeRO partitioning.
PlanSpec probe_plan(const ModelSpec& model, int64_t tokens, Precision precision) {
  PlanSpec p;
  p.model = model;
  p.seq_len = tokens;
  p.cluster.num_gpus = 1;
  p.knobs.sp = 1;
  p.knobs.zero_stage = 0;
  p.knobs.act_ckpt = ActCkpt::kNone;
  p.knobs.precision = precision;
  // Only the elementwise class is read (elementwise_work prices it at unit rates); the other
  // classes need finite rates to be computed at all.
  GpuSpec& g = p.cluster.gpu;
  g.name = "probe";
  g.bf16_tflops = g.fp32_tflops = g.hbm_GBps = g.intra_node_GBps = g.inter_node_GBps = g.pcie_GBps = 1;
  g.memory_gib = g.host_memory_gib_per_node = 1024;
  g.gpus_per_node = 1;
  return p;
}

// One training step of `model` as train.cpp runs it (the gradient buffer zeroed, forward, loss,
// backward with the head's memory tag first), without the optimizer.
void step(Model& model, const at::Tensor& inputs, const at::Tensor& labels) {
  model.grads_flat().zero_();
  const at::Tensor hidden = model.forward_layers(inputs, 0);
  const at::Tensor loss = model.loss_sum(hidden, labels);
  const MemCategory outer = memory_category();
  set_memory_category(MemCategory::kLogits);
  (loss / static_cast<double>(inputs.numel())).backward();
  set_memory_category(outer);
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<LayerSamples> layer_elementwise_samples(const ModelSpec& model, const ProbeScale& scale, Precision precision) {
  ModelSpec one = model;
  one.num_hidden_layers = 1;  // the class's work is per layer: one is enough, and a step is cheap
  Comm comm(DistEnv{}, /*sp=*/1, c10::Device(c10::kCPU), std::chrono::seconds(60));
  kernel_clock_use_thread_cpu_time(calibrate_uses_thread_cpu_time());
  install_kernel_clock();
  LayerSamples out;
  for (int64_t tokens = scale.layer_tokens_first; tokens <= scale.layer_tokens_last; tokens *= 2) {
    const PlanSpec plan = probe_plan(one, tokens, precision);
    const std::optional<ElementwiseWork> work = elementwise_work(plan);
    if (!work) return Status::internal("calibrate: the layer probe needs the costmodel, which this build lacks");
    Model m(one, /*seed=*/1, comm, plan.knobs, c10::Device(c10::kCPU), tokens);
    const at::Tensor inputs = at::randint(0, one.vocab_size, {1, tokens}, at::kLong);
    const at::Tensor labels = at::randint(0, one.vocab_size, {1, tokens}, at::kLong);
    step(m, inputs, labels);  // warms the allocator's block cache, as a run's first step does
    std::vector<double> class_s;
    double spent = 0, last = 0;
    for (int i = 0; i <= scale.reps && (i == 0 || spent + last <= scale.attn_reps_cap_s); ++i) {
      kernel_clock_reset();
      const auto t0 = std::chrono::steady_clock::now();
      step(m, inputs, labels);
      last = seconds(t0);
      spent += last;
      const auto classes = kernel_clock_classes_s();
      const auto it = classes.find("elementwise");
      class_s.push_back(it == classes.end() ? 0.0 : it->second);
    }
    out.samples.push_back({work->bytes, median_of(class_s)});
    out.last_tokens = tokens;
    if (last >= scale.attn_target_s && out.samples.size() >= 2) break;
  }
  kernel_clock_reset();
  return out;
}

}  // namespace spplan::engine
