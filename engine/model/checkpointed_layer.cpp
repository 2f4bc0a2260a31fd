#include "engine/model/checkpointed_layer.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/memory_meter.hpp"
#include "engine/parallel/offload.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct CheckpointedLayer : torch::autograd::Function<CheckpointedLayer> {
  static variable_list forward(AutogradContext* ctx, const LayerFn* fn, bool offload, const at::Tensor& x,
                               at::TensorList params) {
    ctx->saved_data["fn"] = reinterpret_cast<int64_t>(fn);
    ctx->saved_data["offload"] = offload;
    // Asynchronous on CUDA: only the recompute's copy back (the same stream) reads it.
    std::vector<at::Tensor> keep{offload ? copy_to_host(x, MemCategory::kActivations, /*async=*/true) : x};
    keep.insert(keep.end(), params.begin(), params.end());
    ctx->save_for_backward(keep);
    at::NoGradGuard no_grad;
    return (*fn)(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto* fn = reinterpret_cast<const LayerFn*>(ctx->saved_data["fn"].toInt());
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor x = ctx->saved_data["offload"].toBool() ? copy_to_device(saved[0], grad[0].device()) : saved[0];
    variable_list inputs{x.detach().requires_grad_(true)};
    inputs.insert(inputs.end(), saved.begin() + 1, saved.end());
    variable_list outputs;
    {
      at::AutoGradMode enable(true);
      outputs = (*fn)(inputs[0]);
    }
    variable_list g = torch::autograd::grad(outputs, inputs, grad, false, false, /*allow_unused=*/true);
    g.insert(g.begin(), {at::Tensor(), at::Tensor()});  // no gradient for `fn`, `offload`
    return g;
  }
};

}  // namespace

std::vector<at::Tensor> checkpoint_layer(const LayerFn* fn, bool offload, const at::Tensor& x,
                                         const std::vector<at::Tensor>& params) {
  return CheckpointedLayer::apply(fn, offload, x, at::TensorList(params));
}

}  // namespace spplan::engine
