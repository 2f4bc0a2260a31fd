#include "engine/run/train.hpp"

#include <algorithm>
#include <cmath>

#include <ATen/ATen.h>

#include "engine/device/precision.hpp"
#include "engine/parallel/offload.hpp"
#include "engine/parallel/zero.hpp"
#include "engine/run/lr_schedule.hpp"

namespace spplan::engine {
namespace {

int64_t sequences_per_step(const Knobs& k, int64_t dp) { return dp * k.micro_batch * k.grad_accum_steps; }

// The shapes causal attention runs at on this rank: all tokens, h/P query heads and the KV heads
// each rank receives (one when KV heads are replicated: h_kv < P).
AttentionShape attention_shape(const PlanSpec& plan, int64_t sp) {
  const ModelSpec& m = plan.model;
  AttentionShape s;
  s.batch = plan.knobs.micro_batch;
  s.tokens = plan.seq_len / plan.knobs.cp;  // a ring rank's blocks: its 2 zigzag chunks
  s.heads = m.num_attention_heads / sp;
  s.kv_heads = m.num_key_value_heads < sp ? 1 : m.num_key_value_heads / sp;
  s.head_dim = m.head_dim;
  s.dtype = model_dtype(plan.knobs);
  return s;
}

}  // namespace

Trainer::Trainer(const RunOptions& options, Comm& comm, const TokenSource& data)
    : options_(options), comm_(comm), data_(data) {
  const OptimizerSpec& opt = options.plan.optimizer;
  adamw_ = {opt.adam_beta1, opt.adam_beta2, opt.adam_eps};
  // Before the model: the probe's buffers are freed (cached) before the parameters are allocated.
  sdpa_ = select_sdpa_backend(attention_shape(options.plan, comm.sp()), comm.device(),
                              named_sdpa_backend(options.plan.stack.attention, options.plan.attention_named));
  model_ = std::make_unique<Model>(options.plan.model, options.seed, comm, options.plan.knobs, comm.device(),
                                   options.plan.seq_len);
  decay_spans_ = decay_spans(param_units(options.plan.model), model_->zero_layout(), options.weight_decay_all);
  // Allocated up front so the peak includes them from step 1.
  const Knobs& k = options.plan.knobs;
  const int64_t n = model_->zero_layout().shard_numel();  // ZeRO >= 1: this rank's chunks only
  const c10::Device device = comm.device();
  if (k.offload_optimizer != OffloadDevice::kNone) {
    for (at::Tensor* t : {&exp_avg_, &exp_avg_sq_, &master_, &fp32_grads_}) {
      *t = host_zeros(n, at::kFloat, MemCategory::kOptimizer, device);
    }
    if (!model_->grads_on_host()) grad_partition_ = host_zeros(n, model_dtype(k), MemCategory::kOptimizer, device);
  } else {
    MemoryScope tag(MemCategory::kOptimizer);
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
    exp_avg_ = at::zeros({n}, f32);
    exp_avg_sq_ = at::zeros({n}, f32);
    if (model_dtype(k) != at::kFloat) master_ = at::zeros({n}, f32);  // bf16 weights step an fp32 master
  }
  copy_params_to_master();
}

Trainer::~Trainer() = default;

std::vector<int64_t> Trainer::step_window(int64_t j) const {
  const int64_t seq = options_.plan.seq_len;
  return data_.in_order() ? data_.window_at(next_token_ + j * seq, seq) : data_.window(next_sequence_ + j, seq);
}

void Trainer::load_micro_batch(int64_t micro_step, at::Tensor* inputs, at::Tensor* labels, int64_t* first_position,
                               at::Tensor* positions, DocStarts* docs) const {
  const Knobs& k = options_.plan.knobs;
  std::vector<int64_t> in, lab, pos;
  if (docs != nullptr) docs->clear();
  for (int64_t slot = 0; slot < k.micro_batch; ++slot) {
    const int64_t j = sequence_index(0, micro_step, comm_.dp(), comm_.dp_rank(), k.micro_batch, slot);
    const Shard s = shard_of(step_window(j), comm_.sp(), comm_.sp_rank(), data_.eos_id(), comm_.cp(), comm_.cp_rank());
    in.insert(in.end(), s.inputs.begin(), s.inputs.end());
    lab.insert(lab.end(), s.labels.begin(), s.labels.end());
    *first_position = s.first_position;
    pos.insert(pos.end(), s.positions.begin(), s.positions.end());
    if (docs != nullptr && !s.doc_starts.empty()) docs->push_back(s.doc_starts);
  }
  MemoryScope tag(MemCategory::kActivations);
  const auto n = static_cast<int64_t>(in.size()) / k.micro_batch;
  *inputs = at::tensor(in, at::kLong).view({k.micro_batch, n}).to(comm_.device());
  *labels = at::tensor(lab, at::kLong).view({k.micro_batch, n}).to(comm_.device());
  if (positions != nullptr && !pos.empty()) *positions = at::tensor(pos, at::kLong).view({k.micro_batch, n}).to(comm_.device());
}

int64_t Trainer::count_valid_tokens() const {
  int64_t local = 0;
  for (int64_t m = 0; m < options_.plan.knobs.grad_accum_steps; ++m) {
    at::Tensor inputs, labels;
    int64_t first = 0;
    load_micro_batch(m, &inputs, &labels, &first);
    local += labels.ne(kIgnoreLabel).sum().item<int64_t>();
  }
  at::Tensor t = at::tensor({static_cast<double>(local)}, at::kDouble);
  comm_.all_reduce_sum(t);
  return static_cast<int64_t>(std::llround(t.item<double>()));
}

// Summed over the world in buckets of reduce_bucket_elems (contiguous views of the flat grads), in
// reduce_dtype: under SP > 1 DeepSpeed's seq_parallel_communication_data_type, through a converted
// copy per bucket when it is not the gradients' dtype.
void Trainer::all_reduce_grads() {
  const Knobs& k = options_.plan.knobs;
  at::Tensor& grads = model_->grads_flat();
  const int64_t n = grads.numel();
  const int64_t bucket = k.reduce_bucket_elems >= 1 ? static_cast<int64_t>(std::min<double>(k.reduce_bucket_elems, n)) : n;
  const at::ScalarType wire = reduce_dtype(k, comm_.sp());
  for (int64_t off = 0; off < n; off += bucket) {
    at::Tensor chunk = grads.narrow(0, off, std::min(bucket, n - off));
    if (chunk.scalar_type() == wire) {
      comm_.all_reduce_sum(chunk);
      continue;
    }
    MemoryScope tag(MemCategory::kBuffers);
    at::Tensor converted = chunk.to(wire);
    comm_.all_reduce_sum(converted);
    chunk.copy_(converted);
  }
}

StepStats Trainer::step() {
  StepStats st;
  PhaseTimes& ph = st.phases;
  const int64_t stage = options_.plan.knobs.zero_stage;
  const double a2a_before = comm_.times().all_to_all_s;
  const double reduce_scatter_before = comm_.times().reduce_scatter_s;
  const double ring_before = comm_.times().ring_s;
  PhaseClock clock(comm_.device());
  st.tokens = count_valid_tokens();
  model_->grads_flat().zero_();
  ph.data_s += clock.lap();
  double local_loss = 0, local_balance = 0;
  for (int64_t m = 0; m < options_.plan.knobs.grad_accum_steps; ++m) {
    at::Tensor inputs, labels;
    int64_t first = 0;
    at::Tensor positions;
    DocStarts docs;
    load_micro_batch(m, &inputs, &labels, &first, &positions, &docs);
    ph.data_s += clock.lap();
    at::Tensor hidden = model_->forward_layers(inputs, first, positions, docs);
    ph.forward_s += clock.lap();
    const at::Tensor loss_sum = model_->loss_sum(hidden, labels);
    // From here the graph alone holds the last layer's output (the final norm saves it until its
    // backward), as in Hugging Face, whose training loop keeps the loss and logits, not the hidden
    // states: held here it would stay alive through every layer's backward (a measured peak showed it).
    hidden.reset();
    local_loss += loss_sum.item<double>();
    const MemCategory outer = memory_category();
    set_memory_category(MemCategory::kLogits);  // the head's backward runs first; layers retag it
    at::Tensor objective = loss_sum / static_cast<double>(st.tokens);
    // A mixture with output_router_logits: transformers adds router_aux_loss_coef times each forward
    // pass's load-balancing loss; the step takes the mean over its dp x grad_accum passes (each
    // pass's loss is the sum of its ranks' shares: moe.hpp).
    const at::Tensor balance = model_->load_balancing_share();
    if (balance.defined()) {
      const double weight = options_.plan.model.router_aux_loss_coef /
                            static_cast<double>(comm_.dp() * options_.plan.knobs.grad_accum_steps);
      objective = objective + weight * balance;
      local_balance += weight * balance.item<double>();
    }
    ph.loss_s += clock.lap();
    objective.backward();
    set_memory_category(outer);
    ph.backward_s += clock.lap();
  }
  if (stage < 2) all_reduce_grads();  // ZeRO 2, 3: reduce-scattered during the backward
  st.grad_norm = global_grad_norm();  // a reduction: part of this phase
  at::Tensor loss = at::tensor({local_loss, local_balance}, at::kDouble);
  comm_.all_reduce_sum(loss);
  ph.grad_all_reduce_s = clock.lap();
  // Clipping as torch.nn.utils.clip_grad_norm_ (and DeepSpeed's gradient_clipping): scale by
  // clip / (norm + 1e-6) when that is below 1. The norm is reported with or without clipping.
  const OptimizerSpec& opt = options_.plan.optimizer;
  // The schedule spans the plan's train_steps when it has one (a 5-step try of a 1000-step plan
  // runs that plan's first 5 learning rates), else the run's --steps; a resume keeps its horizon.
  st.lr = lr_at(opt, steps_done_, options_.schedule_steps);
  const double grad_scale = opt.grad_clip > 0 ? std::min(1.0, opt.grad_clip / (st.grad_norm + 1e-6)) : 1.0;
  if (master_.defined()) {
    master_adamw_step(st.lr, grad_scale);
  } else {
    adamw_step(st.lr, grad_scale);
  }
  if ((stage == 1 || stage == 2) && comm_.world() > 1) all_gather_params();
  ph.optimizer_s = clock.lap();
  ph.all_to_all_s = comm_.times().all_to_all_s - a2a_before;
  ph.grad_reduce_scatter_s = comm_.times().reduce_scatter_s - reduce_scatter_before;
  ph.ring_s = comm_.times().ring_s - ring_before;
  st.loss = loss[0].item<double>() / static_cast<double>(st.tokens) + loss[1].item<double>();
  st.step_time_s = ph.total_s();
  ++steps_done_;
  next_sequence_ += sequences_per_step(options_.plan.knobs, comm_.dp());
  next_token_ += sequences_per_step(options_.plan.knobs, comm_.dp()) * options_.plan.seq_len;
  return st;
}

}  // namespace spplan::engine
