#include "engine/run/train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "engine/run/lr_schedule.hpp"
#include "engine/parallel/offload.hpp"
#include "engine/device/precision.hpp"
#include "engine/parallel/zero.hpp"

namespace spplan::engine {
namespace {

using Clock = std::chrono::steady_clock;

// Consecutive phases of a step: lap() drains the device, then returns the seconds since the last
// lap. Draining costs the overlap between phases a step would otherwise have (a launch queue's
// worth, microseconds against phases of milliseconds), and makes each phase its own work.
class PhaseClock {
 public:
  explicit PhaseClock(c10::Device device) : device_(device) { synchronize(device_); last_ = Clock::now(); }
  double lap() {
    synchronize(device_);
    const Clock::time_point now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  c10::Device device_;
  Clock::time_point last_;
};

int64_t sequences_per_step(const Knobs& k, int64_t dp) { return dp * k.micro_batch * k.grad_accum_steps; }

// Fills, unit by unit, the elements this rank owns of a shard-shaped buffer (model.hpp
// owned_params: its chunk of every unit) from the unpadded parameter vector that `weights` holds.
void fill_owned(const ZeroLayout& layout, const HfWeights& weights, const at::Tensor& shard) {
  for (const ZeroUnit& u : layout.units()) {
    const int64_t begin = layout.rank() * u.chunk;
    const int64_t n = std::clamp<int64_t>(u.numel - begin, 0, u.chunk);  // the last ranks' chunks end in padding
    at::Tensor host = at::empty({n}, at::kFloat);
    weights.read(u.real_offset + begin, n, host.data_ptr<float>());
    layout.shard_part(shard, u).narrow(0, 0, n).copy_(host);
  }
}

// The shapes causal attention runs at on this rank: all tokens, h/P query heads and the KV heads
// each rank receives (one when KV heads are replicated: h_kv < P).
AttentionShape attention_shape(const PlanSpec& plan, int64_t sp) {
  const ModelSpec& m = plan.model;
  AttentionShape s;
  s.batch = plan.knobs.micro_batch;
  s.tokens = plan.seq_len;
  s.heads = m.num_attention_heads / sp;
  s.kv_heads = m.num_key_value_heads < sp ? 1 : m.num_key_value_heads / sp;
  s.head_dim = m.head_dim;
  s.dtype = model_dtype(plan.knobs);
  return s;
}

}  // namespace

Trainer::Trainer(const RunOptions& options, Comm& comm, const TokenSource& data)
    : options_(options), comm_(comm), data_(data) {
  // Before the model: the probe's buffers are freed (cached) before the parameters are allocated.
  sdpa_ = select_sdpa_backend(attention_shape(options.plan, comm.sp()), comm.device());
  model_ = std::make_unique<Model>(options.plan.model, options.seed, comm, options.plan.knobs, comm.device());
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

void Trainer::load_micro_batch(int64_t micro_step, at::Tensor* inputs, at::Tensor* labels, int64_t* first_position) const {
  const Knobs& k = options_.plan.knobs;
  std::vector<int64_t> in, lab;
  for (int64_t slot = 0; slot < k.micro_batch; ++slot) {
    const int64_t index = sequence_index(next_sequence_, micro_step, comm_.dp(), comm_.dp_rank(), k.micro_batch, slot);
    const Shard s = shard_of(data_.window(index, options_.plan.seq_len), comm_.sp(), comm_.sp_rank(), data_.eos_id());
    in.insert(in.end(), s.inputs.begin(), s.inputs.end());
    lab.insert(lab.end(), s.labels.begin(), s.labels.end());
    *first_position = s.first_position;
  }
  MemoryScope tag(MemCategory::kActivations);
  const auto n = static_cast<int64_t>(in.size()) / k.micro_batch;
  *inputs = at::tensor(in, at::kLong).view({k.micro_batch, n}).to(comm_.device());
  *labels = at::tensor(lab, at::kLong).view({k.micro_batch, n}).to(comm_.device());
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

// Sums of squares in fp64, in slabs: fp32 sums over a layer's ~1e6 elements drift by ~1e-5
// relative (measured: the ZeRO 2 shards' norms disagreed with the full gradient's by 3e-5), and
// a slab bounds the fp64 copy the reduction makes (kNormSlabElems x 8 B) whatever a unit's size.
double Trainer::global_grad_norm() {
  constexpr int64_t kNormSlabElems = int64_t{1} << 24;  // 128 MiB of fp64 at most
  at::NoGradGuard no_grad;
  MemoryScope tag(MemCategory::kBuffers);
  std::vector<at::Tensor> sums;
  for (const at::Tensor& g : model_->owned_grads()) {
    for (int64_t off = 0; off < g.numel(); off += kNormSlabElems) {
      const at::Tensor slab = g.narrow(0, off, std::min(kNormSlabElems, g.numel() - off));
      sums.push_back(at::linalg_vector_norm(slab, 2, c10::nullopt, false, at::kDouble).square());
    }
  }
  at::Tensor sum_sq = (sums.empty() ? at::zeros({}, at::kDouble) : at::stack(sums).sum()).reshape({1}).to(comm_.device());
  // ZeRO 0: every rank holds every element; ZeRO >= 1: the owned chunks partition them.
  if (options_.plan.knobs.zero_stage >= 1 && comm_.world() > 1) comm_.all_reduce_sum(sum_sq);
  return std::sqrt(sum_sq.item<double>());
}

// LibTorch's fused AdamW kernel (what torch.optim.AdamW(fused=True) calls): one pass over the flat
// buffers instead of eight elementwise ones (measured 3 ms instead of 20-50 ms for 5M parameters).
// On what this rank owns: one view per ZeRO unit (every element at ZeRO 0). AdamW is elementwise,
// so stepping chunks gives the same numbers as stepping the whole buffer.
void Trainer::adamw_step(double lr, double grad_scale) {
  at::NoGradGuard no_grad;
  MemoryScope tag(MemCategory::kOptimizer);
  const AdamWConfig& c = adamw_;
  if (grad_scale < 1) {
    for (at::Tensor& g : model_->owned_grads()) g.mul_(grad_scale);
  }
  const ZeroLayout& layout = model_->zero_layout();
  const at::Tensor step = at::full({}, static_cast<double>(steps_done_ + 1), model_->params_flat().options());
  std::vector<at::Tensor> m, v, steps;
  for (const ZeroUnit& u : layout.units()) {
    m.push_back(layout.shard_part(exp_avg_, u));
    v.push_back(layout.shard_part(exp_avg_sq_, u));
    steps.push_back(step);
  }
  at::_fused_adamw_(model_->owned_params(), model_->owned_grads(), m, v, {}, steps, lr, c.beta1, c.beta2,
                    options_.plan.optimizer.weight_decay, c.eps, /*amsgrad=*/false, /*maximize=*/false);
}

// AdamW on the fp32 master copy (bf16 training, or the optimizer offloaded). Offloaded, the
// gradients go to the host into the gradient partition, then the fp32 buffer AdamW reads, as
// DeepSpeed does; on the device, bf16 gradients are upcast into a transient fp32 buffer (DeepSpeed's
// step-time fp32 gradients). Then the updated parameters are copied back (cast to the model dtype).
void Trainer::master_adamw_step(double lr, double grad_scale) {
  at::NoGradGuard no_grad;
  const AdamWConfig& c = adamw_;
  const ZeroLayout& layout = model_->zero_layout();
  const std::vector<at::Tensor> grads = model_->owned_grads(), params = model_->owned_params();
  const at::Tensor step = at::full({}, static_cast<double>(steps_done_ + 1), master_.options());
  MemoryScope tag(MemCategory::kOptimizer);
  const at::Tensor fp32_grads_flat = fp32_grads_.defined() ? fp32_grads_ : at::empty_like(master_);
  std::vector<at::Tensor> master, fp32_grads, m, v, steps;
  for (size_t u = 0; u < grads.size(); ++u) {
    const ZeroUnit& unit = layout.units()[u];
    at::Tensor partition = grads[u];
    if (grad_partition_.defined()) {
      partition = layout.shard_part(grad_partition_, unit);
      partition.copy_(grads[u]);  // device to host
    }
    fp32_grads.push_back(layout.shard_part(fp32_grads_flat, unit));
    fp32_grads.back().copy_(partition);
    if (grad_scale < 1) fp32_grads.back().mul_(grad_scale);  // clipped in fp32, as DeepSpeed does
    master.push_back(layout.shard_part(master_, unit));
    m.push_back(layout.shard_part(exp_avg_, unit));
    v.push_back(layout.shard_part(exp_avg_sq_, unit));
    steps.push_back(step);
  }
  at::_fused_adamw_(master, fp32_grads, m, v, {}, steps, lr, c.beta1, c.beta2, options_.plan.optimizer.weight_decay,
                    c.eps, /*amsgrad=*/false, /*maximize=*/false);
  for (size_t u = 0; u < params.size(); ++u) params[u].copy_(master[u]);  // host to device
}

// The master copy starts from the owned parameters.
void Trainer::copy_params_to_master() {
  if (!master_.defined()) return;
  const ZeroLayout& layout = model_->zero_layout();
  const std::vector<at::Tensor> owned = model_->owned_params();
  for (size_t u = 0; u < owned.size(); ++u) layout.shard_part(master_, layout.units()[u]).copy_(owned[u]);
}

// ZeRO 1, 2: every rank stepped its chunks; gather them so all ranks hold the new full parameters.
void Trainer::all_gather_params() {
  const ZeroLayout& layout = model_->zero_layout();
  at::Tensor& params = model_->params_flat();
  MemoryScope tag(MemCategory::kBuffers);
  for (const ZeroUnit& u : layout.units()) {
    at::Tensor out = layout.unit_of(params, u);
    comm_.all_gather_flat(out, layout.chunk_of(params, u).clone());  // the input must not alias the output
  }
}

// Params and AdamW moments, full and unpadded in declaration order: the checkpoint format at every
// ZeRO stage and world size, on the device. Collective at ZeRO >= 1 with world > 1 (the shards
// are gathered); at ZeRO 0 the tensors themselves.
std::vector<at::Tensor> Trainer::full_state() {
  const ZeroLayout& layout = model_->zero_layout();
  MemoryScope tag(MemCategory::kBuffers);  // checkpoint staging
  // Offloaded state is host memory; collectives run on the device (a no-op on the CPU).
  auto on_device = [&](const at::Tensor& t) { return t.to(comm_.device()); };
  return {gathered_params(), layout.unpadded(gather_shards(comm_, layout, on_device(exp_avg_))),
          layout.unpadded(gather_shards(comm_, layout, on_device(exp_avg_sq_)))};
}

// The parameters, full and unpadded, on the device: with a master copy the fp32 master (bf16
// weights are its rounding). Collective when the parameters or the master are sharded.
at::Tensor Trainer::gathered_params() {
  const ZeroLayout& layout = model_->zero_layout();
  MemoryScope tag(MemCategory::kBuffers);
  auto on_device = [&](const at::Tensor& t) { return t.to(comm_.device()); };
  const at::Tensor params = master_.defined() ? gather_shards(comm_, layout, on_device(master_))
                            : options_.plan.knobs.zero_stage >= 3
                                ? gather_shards(comm_, layout, on_device(model_->params_flat()))
                                : model_->params_flat();
  return layout.unpadded(params);
}

at::Tensor Trainer::full_params() {
  const at::Tensor params = gathered_params();  // every rank: the gathers are collective
  if (comm_.rank() != 0) return {};
  return params.to(at::kFloat).cpu().contiguous();
}

void Trainer::load_weights(const HfWeights& weights) {
  at::NoGradGuard no_grad;
  const ZeroLayout& layout = model_->zero_layout();
  if (options_.plan.knobs.zero_stage >= 3) {
    fill_owned(layout, weights, model_->params_flat());
  } else {  // every rank holds the full parameters
    at::Tensor host = at::empty({layout.num_params()}, at::kFloat);
    weights.read(0, layout.num_params(), host.data_ptr<float>());
    layout.load_unpadded(host, model_->params_flat());
  }
  if (master_.defined()) fill_owned(layout, weights, master_);  // fp32 from the file, not from bf16 weights
}

StepStats Trainer::step() {
  StepStats st;
  PhaseTimes& ph = st.phases;
  const int64_t stage = options_.plan.knobs.zero_stage;
  const double a2a_before = comm_.times().all_to_all_s;
  const double reduce_scatter_before = comm_.times().reduce_scatter_s;
  PhaseClock clock(comm_.device());
  st.tokens = count_valid_tokens();
  model_->grads_flat().zero_();
  ph.data_s += clock.lap();
  double local_loss = 0;
  for (int64_t m = 0; m < options_.plan.knobs.grad_accum_steps; ++m) {
    at::Tensor inputs, labels;
    int64_t first = 0;
    load_micro_batch(m, &inputs, &labels, &first);
    ph.data_s += clock.lap();
    const at::Tensor hidden = model_->forward_layers(inputs, first);
    ph.forward_s += clock.lap();
    const at::Tensor loss_sum = model_->loss_sum(hidden, labels);
    local_loss += loss_sum.item<double>();
    ph.loss_s += clock.lap();
    const MemCategory outer = memory_category();
    set_memory_category(MemCategory::kLogits);  // the head's backward runs first; layers retag it
    (loss_sum / static_cast<double>(st.tokens)).backward();
    set_memory_category(outer);
    ph.backward_s += clock.lap();
  }
  if (stage < 2) all_reduce_grads();  // ZeRO 2, 3: reduce-scattered during the backward
  st.grad_norm = global_grad_norm();  // a reduction: part of this phase
  at::Tensor loss = at::tensor({local_loss}, at::kDouble);
  comm_.all_reduce_sum(loss);
  ph.grad_all_reduce_s = clock.lap();
  // Clipping as torch.nn.utils.clip_grad_norm_ (and DeepSpeed's gradient_clipping): scale by
  // clip / (norm + 1e-6) when that is below 1. The norm is reported with or without clipping.
  const OptimizerSpec& opt = options_.plan.optimizer;
  st.lr = lr_at(opt, steps_done_, options_.steps);
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
  st.loss = loss.item<double>() / static_cast<double>(st.tokens);
  st.step_time_s = ph.total_s();
  ++steps_done_;
  next_sequence_ += sequences_per_step(options_.plan.knobs, comm_.dp());
  return st;
}

std::vector<BlobRef> Trainer::state_blobs() {
  // Only rank 0 writes: the others take part only when the shards must be gathered, and then
  // keep nothing (no device-to-host copies of state nobody writes).
  const bool gather = options_.plan.knobs.zero_stage >= 1 && comm_.world() > 1;
  if (comm_.rank() != 0) {
    if (gather) full_state();
    return {};
  }
  // Host copies (the tensors themselves on CPU at ZeRO 0); kept alive until drop_state_blobs().
  host_state_ = full_state();
  for (at::Tensor& t : host_state_) t = t.cpu();
  host_state_.push_back(at::detail::getDefaultCPUGenerator().get_state());
  const char* names[] = {"params.f32", "adam_m.f32", "adam_v.f32", "cpu_rng.bin"};
  std::vector<BlobRef> blobs;
  for (size_t i = 0; i < host_state_.size(); ++i) {
    blobs.push_back({names[i], host_state_[i].data_ptr(), static_cast<size_t>(host_state_[i].nbytes())});
  }
  return blobs;
}

CheckpointMeta Trainer::state_meta() const {
  CheckpointMeta m;
  m.step = steps_done_;
  m.next_sequence = next_sequence_;
  m.seed = options_.seed;
  m.model = model_fingerprint(options_.plan.model);
  const Knobs& k = options_.plan.knobs;
  m.run = "world " + std::to_string(comm_.world()) + " sp " + std::to_string(comm_.sp()) + " dp " +
          std::to_string(comm_.dp()) + " micro_batch " + std::to_string(k.micro_batch) + " grad_accum " +
          std::to_string(k.grad_accum_steps) + " seq " + std::to_string(options_.plan.seq_len);
  return m;
}

// The blobs are full and unpadded (state_blobs); each rank keeps what its ZeRO stage stores.
Status Trainer::restore(const LoadedCheckpoint& ck) {
  auto read = [&](const char* name, at::Tensor& host) -> Status {
    const auto it = ck.blobs.find(name);
    if (it == ck.blobs.end() || it->second.size() != static_cast<size_t>(host.nbytes())) {
      return Status::invalid("--resume: " + ck.folder + "/" + name + ": missing or wrong size (allowed: " +
                             std::to_string(host.nbytes()) + " bytes)");
    }
    std::memcpy(host.data_ptr(), it->second.data(), it->second.size());
    return Status::ok();
  };
  at::NoGradGuard no_grad;
  const ZeroLayout& layout = model_->zero_layout();
  at::Tensor host = at::empty({layout.num_params()}, at::kFloat);
  SPPLAN_RETURN_IF_ERROR(read("params.f32", host));
  if (options_.plan.knobs.zero_stage >= 3) {
    layout.load_unpadded_shard(host, model_->params_flat());  // cast to the model dtype
  } else {
    layout.load_unpadded(host, model_->params_flat());
  }
  if (master_.defined()) layout.load_unpadded_shard(host, master_);  // fp32, as saved
  SPPLAN_RETURN_IF_ERROR(read("adam_m.f32", host));
  layout.load_unpadded_shard(host, exp_avg_);
  SPPLAN_RETURN_IF_ERROR(read("adam_v.f32", host));
  layout.load_unpadded_shard(host, exp_avg_sq_);
  at::Tensor rng = at::detail::getDefaultCPUGenerator().get_state();
  SPPLAN_RETURN_IF_ERROR(read("cpu_rng.bin", rng));
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle to the global one
  generator.set_state(rng);
  steps_done_ = ck.meta.step;
  next_sequence_ = ck.meta.next_sequence;
  return Status::ok();
}

}  // namespace spplan::engine
