// The Trainer's state half (train.hpp): checkpoints (the full, unpadded parameters and AdamW
// moments at every ZeRO stage and world size, and back) and the weights of --init-from and
// --export-hf.
#include "engine/run/train.hpp"

#include <algorithm>
#include <cstring>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "engine/device/memory_meter.hpp"
#include "engine/parallel/zero.hpp"
#include "engine/run/resume_settings.hpp"

namespace spplan::engine {
namespace {

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

}  // namespace

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
  m.data = data_.fingerprint();
  m.eos_id = options_.eos_id;
  m.settings = settings_of(options_);
  m.settings->next_token = next_token_;
  const Knobs& k = options_.plan.knobs;
  m.run = "world " + std::to_string(comm_.world()) + " sp " + std::to_string(comm_.sp()) +
          (comm_.cp() > 1 ? " cp " + std::to_string(comm_.cp()) : std::string()) + " dp " +
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
  // A checkpoint without settings was written by a run that read sequence i at token i x seq.
  next_token_ = ck.meta.settings ? ck.meta.settings->next_token : ck.meta.next_sequence * options_.plan.seq_len;
  return Status::ok();
}

}  // namespace spplan::engine
