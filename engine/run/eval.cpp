// Trainer::evaluate (eval.hpp): forward-only loss on held-out tokens.
#include "engine/run/eval.hpp"

#include <cmath>

#include <ATen/ATen.h>

#include "engine/run/train.hpp"

namespace spplan::engine {

EvalResult Trainer::evaluate(const TokenSource& eval) {
  at::NoGradGuard no_grad;
  const Knobs& k = options_.plan.knobs;
  const int64_t per_group = k.micro_batch * k.grad_accum_steps;  // this DP group's share of one global batch
  double loss = 0;
  int64_t tokens = 0;
  for (int64_t m = 0; m < per_group; ++m) {
    const int64_t index = m * comm_.dp() + comm_.dp_rank();
    const Shard s = shard_of(eval.window(index, options_.plan.seq_len), comm_.sp(), comm_.sp_rank(), eval.eos_id(),
                             comm_.cp(), comm_.cp_rank());
    const auto n = static_cast<int64_t>(s.inputs.size());
    const at::Tensor inputs = at::tensor(s.inputs, at::kLong).view({1, n}).to(comm_.device());
    const at::Tensor labels = at::tensor(s.labels, at::kLong).view({1, n}).to(comm_.device());
    // The ring's zigzag tokens are not contiguous: RoPE takes their global positions.
    const at::Tensor positions =
        comm_.cp() > 1 ? at::tensor(s.positions, at::kLong).view({1, n}).to(comm_.device()) : at::Tensor();
    const at::Tensor hidden = model_->forward_layers(inputs, s.first_position, positions);
    loss += model_->loss_sum(hidden, labels).item<double>();
    tokens += labels.ne(kIgnoreLabel).sum().item<int64_t>();
  }
  at::Tensor t = at::tensor({loss, static_cast<double>(tokens)}, at::kDouble);
  comm_.all_reduce_sum(t);
  EvalResult r;
  r.tokens = static_cast<int64_t>(std::llround(t[1].item<double>()));
  r.loss = r.tokens > 0 ? t[0].item<double>() / static_cast<double>(r.tokens) : 0.0;
  return r;
}

}  // namespace spplan::engine
