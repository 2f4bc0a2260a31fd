// Trainer::evaluate (eval.hpp): forward-only loss on held-out tokens.
#include "engine/run/eval.hpp"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

#include "engine/run/train.hpp"

namespace spplan::engine {

EvalResult Trainer::evaluate(const TokenSource& eval) {
  at::NoGradGuard no_grad;
  const int64_t seq = options_.plan.seq_len;
  const int64_t windows = (eval.num_tokens() - 1) / seq;  // >= 1: check_enough_tokens
  const int64_t per_group = (windows + comm_.dp() - 1) / comm_.dp();
  double loss = 0, balance = 0;
  int64_t tokens = 0;
  for (int64_t m = 0; m < per_group; ++m) {
    const int64_t index = m * comm_.dp() + comm_.dp_rank();
    Shard s = shard_of(eval.window_at(std::min(index, windows - 1) * seq, seq), comm_.sp(), comm_.sp_rank(),
                       eval.eos_id(), comm_.cp(), comm_.cp_rank());
    if (index >= windows) std::fill(s.labels.begin(), s.labels.end(), kIgnoreLabel);  // a group past the end
    const auto n = static_cast<int64_t>(s.inputs.size());
    const at::Tensor inputs = at::tensor(s.inputs, at::kLong).view({1, n}).to(comm_.device());
    const at::Tensor labels = at::tensor(s.labels, at::kLong).view({1, n}).to(comm_.device());
    // As training reads them (load_micro_batch): the ring's zigzag tokens take their global
    // positions, packed documents (--eos-id) their positions and attention within each document.
    const at::Tensor positions =
        s.positions.empty() ? at::Tensor() : at::tensor(s.positions, at::kLong).view({1, n}).to(comm_.device());
    const DocStarts docs = s.doc_starts.empty() ? DocStarts{} : DocStarts{s.doc_starts};
    const at::Tensor hidden = model_->forward_layers(inputs, s.first_position, positions, docs);
    loss += model_->loss_sum(hidden, labels).item<double>();
    tokens += labels.ne(kIgnoreLabel).sum().item<int64_t>();
    // A mixture with output_router_logits: transformers' eval loss adds router_aux_loss_coef times
    // each window's load-balancing loss (the sum of its ranks' shares), here their mean over windows.
    const at::Tensor share = model_->load_balancing_share();
    if (share.defined() && index < windows) balance += share.item<double>();
  }
  at::Tensor t = at::tensor({loss, static_cast<double>(tokens), balance}, at::kDouble);
  comm_.all_reduce_sum(t);
  EvalResult r;
  r.tokens = static_cast<int64_t>(std::llround(t[1].item<double>()));
  r.loss = r.tokens > 0 ? t[0].item<double>() / static_cast<double>(r.tokens) : 0.0;
  r.loss += options_.plan.model.router_aux_loss_coef * t[2].item<double>() / static_cast<double>(windows);
  return r;
}

}  // namespace spplan::engine
