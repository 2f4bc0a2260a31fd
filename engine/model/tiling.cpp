#include "engine/model/tiling.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/memory_meter.hpp"
#include "engine/io/data.hpp"
#include "engine/model/fused_kernels.hpp"

namespace spplan::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// ---- tiled loss ------------------------------------------------------------------------------

struct FusedLinearCrossEntropy : torch::autograd::Function<FusedLinearCrossEntropy> {
  // Every tensor made here is loss memory (MemCategory::kLogits), as the costmodel counts it:
  // the chunk logits (and their fp32 blocks), and grad_input / grad_weight held until backward
  // (loss_saved_bytes). Dtypes are Liger's defaults: logits, grad_input and grad_weight in the
  // model dtype (accum_dtype None: Liger accumulates grad_weight in the parameter dtype unless a
  // caller asks for fp32, LIGER fused_linear_cross_entropy_forward), token losses in fp32. The
  // GEMMs run in the model dtype; their own accumulation is fp32 inside the kernel.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& labels, int64_t chunk) {
    TORCH_CHECK(hidden.dim() == 2 && labels.dim() == 1 && labels.size(0) == hidden.size(0),
                "fused_linear_cross_entropy: hidden [T, h] and labels [T] expected");
    MemoryScope tag(MemCategory::kLogits);
    const int64_t tokens = hidden.size(0);
    at::Tensor grad_input = at::empty_like(hidden, at::MemoryFormat::Contiguous);
    at::Tensor grad_weight = at::zeros(weight.sizes(), weight.options());
    at::Tensor token_loss = at::empty({tokens}, hidden.options().dtype(at::kFloat));
    for (int64_t start = 0; start < tokens; start += chunk) {
      const int64_t c = std::min(chunk, tokens - start);
      const at::Tensor x = hidden.narrow(0, start, c);
      at::Tensor logits = at::mm(x, weight.t());  // [c, V]: the only vocabulary-wide tensor
      cross_entropy_grad(logits, labels.narrow(0, start, c), token_loss.narrow(0, start, c));  // in place
      at::Tensor grad_x = grad_input.narrow(0, start, c);
      at::mm_out(grad_x, logits, weight);      // d loss / d hidden for this chunk
      grad_weight.addmm_(logits.t(), x);       // d loss / d weight, summed over chunks
    }
    ctx->save_for_backward({grad_input, grad_weight});
    return token_loss.sum();
  }

  // The loss is a scalar, so its gradients are the stored ones times the incoming gradient.
  // Scaling in place saves a second [V, h] buffer (Liger does the same), at the price of allowing
  // one backward only.
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    TORCH_CHECK(!ctx->saved_data.count("done"), "fused_linear_cross_entropy: backward ran twice");
    ctx->saved_data["done"] = true;
    variable_list saved = ctx->get_saved_variables();
    at::Tensor grad_input = saved[0], grad_weight = saved[1];
    grad_input.mul_(grad[0]);
    grad_weight.mul_(grad[0]);
    return {grad_input, grad_weight, at::Tensor(), at::Tensor()};
  }
};

// ---- tiled MLP -------------------------------------------------------------------------------

// The untiled MLP; the eager SwiGLU is kept exactly as the model has always computed it.
at::Tensor mlp_once(const at::Tensor& x, const at::Tensor& w_gate_up, const at::Tensor& w_down, bool fused) {
  const at::Tensor gate_up = at::linear(x, w_gate_up);  // [b, n, 2 i]
  if (fused) return at::linear(fused_swiglu(gate_up), w_down);
  const int64_t ffn = gate_up.size(2) / 2;
  return at::linear(at::silu(gate_up.narrow(2, 0, ffn)) * gate_up.narrow(2, ffn, ffn), w_down);
}

// Calls fn(start, length) for each slice of n tokens cut into `shards` (as torch.chunk does:
// slices of ceil(n / shards), the last one possibly shorter).
template <class Fn>
void for_each_slice(int64_t n, int64_t shards, Fn fn) {
  const int64_t len = ceil_div(n, std::max<int64_t>(1, shards));
  for (int64_t start = 0; start < n; start += len) fn(start, std::min(len, n - start));
}

struct TiledMlp : torch::autograd::Function<TiledMlp> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w_gate_up,
                            const at::Tensor& w_down, bool fused_swiglu, int64_t shards) {
    MemoryScope tag(MemCategory::kActivations);
    ctx->saved_data["fused_swiglu"] = fused_swiglu;
    ctx->saved_data["shards"] = shards;
    ctx->save_for_backward({x, w_gate_up, w_down});
    at::Tensor out = at::empty({x.size(0), x.size(1), w_down.size(0)}, x.options());
    // Autograd is off here (Function::apply), so each slice's intermediates die with the slice.
    for_each_slice(x.size(1), shards, [&](int64_t start, int64_t len) {
      out.narrow(1, start, len).copy_(mlp_once(x.narrow(1, start, len), w_gate_up, w_down, fused_swiglu));
    });
    return out;
  }

  // Recomputes one slice with autograd on, differentiates it, and keeps only its input gradient
  // (written into grad_x) and the weight gradients (summed over slices).
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    MemoryScope tag(MemCategory::kActivations);
    const bool fused_swiglu = ctx->saved_data["fused_swiglu"].toBool();
    const int64_t shards = ctx->saved_data["shards"].toInt();
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w_gate_up = saved[1], &w_down = saved[2];
    at::Tensor grad_x = at::empty_like(x);
    at::Tensor grad_gate_up, grad_down;
    for_each_slice(x.size(1), shards, [&](int64_t start, int64_t len) {
      const variable_list inputs{x.narrow(1, start, len).detach().requires_grad_(true), w_gate_up, w_down};
      at::Tensor y;
      {
        at::AutoGradMode enable(true);
        y = mlp_once(inputs[0], w_gate_up, w_down, fused_swiglu);
      }
      const variable_list g = torch::autograd::grad({y}, inputs, {grad[0].narrow(1, start, len)});
      grad_x.narrow(1, start, len).copy_(g[0]);
      grad_gate_up = grad_gate_up.defined() ? grad_gate_up.add_(g[1]) : g[1];
      grad_down = grad_down.defined() ? grad_down.add_(g[2]) : g[2];
    });
    return {grad_x, grad_gate_up, grad_down, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

int64_t loss_chunk_tokens(int64_t tokens, int64_t hidden, int64_t vocab) {
  const int64_t chunks_per_hidden_size = ceil_div(vocab, hidden);  // V / h, rounded up
  return std::max<int64_t>(1, next_power_of_two(ceil_div(tokens, chunks_per_hidden_size)));
}

at::Tensor fused_linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels,
                                      int64_t chunk_tokens) {
  const int64_t chunk = chunk_tokens > 0 ? chunk_tokens : loss_chunk_tokens(hidden.size(0), hidden.size(1), weight.size(0));
  return FusedLinearCrossEntropy::apply(hidden, weight, labels, chunk);
}

int64_t mlp_shards(int64_t tokens, int64_t hidden) { return std::max<int64_t>(1, ceil_div(tokens, hidden)); }

MlpOptions mlp_options(const Knobs& knobs, int64_t tokens, int64_t hidden) {
  MlpOptions o;
  o.fused_swiglu = knobs.tiled_loss;  // Liger's kernels come with its fused loss (costmodel's fused_layer_kernels)
  o.shards = knobs.tiled_mlp ? mlp_shards(tokens, hidden) : 1;
  return o;
}

at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& w_gate_up, const at::Tensor& w_down, const MlpOptions& o) {
  if (o.shards <= 1) return mlp_once(x, w_gate_up, w_down, o.fused_swiglu);
  return TiledMlp::apply(x, w_gate_up, w_down, o.fused_swiglu, o.shards);
}

}  // namespace spplan::engine
