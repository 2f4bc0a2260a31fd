#include "engine/parallel/zero.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "engine/device/memory_meter.hpp"
#include "engine/parallel/offload.hpp"

namespace spplan::engine {
namespace {

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// See zero_unit_params. The context travels as an integer (like CheckpointedLayer's function):
// it belongs to the Model, which outlives the graph.
struct ZeroUnitParams : torch::autograd::Function<ZeroUnitParams> {
  static variable_list forward(AutogradContext* ctx, const ZeroUnitContext* z, const at::Tensor& shard_leaf) {
    ctx->saved_data["z"] = reinterpret_cast<int64_t>(z);
    at::Tensor full = z->resident;
    if (!full.defined()) {
      MemoryScope tag(MemCategory::kBuffers);  // gathered parameters: a ZeRO-3 working buffer
      const at::Tensor mine = z->shard_on_host ? copy_to_device(shard_leaf.detach(), z->device) : shard_leaf;
      full = at::empty({z->comm->world() * z->unit->chunk}, mine.options());
      z->comm->all_gather_flat(full, mine);
    }
    variable_list views = ZeroLayout::carve(full, *z->unit);
    // Not views for autograd: this function is their grad_fn, its backward does the reduction.
    for (at::Tensor& v : views) v = v.detach();
    return views;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto* z = reinterpret_cast<const ZeroUnitContext*>(ctx->saved_data["z"].toInt());
    MemoryScope tag(MemCategory::kBuffers);  // the unit's gradient on its way to the owners
    at::Tensor flat = at::zeros({z->comm->world() * z->unit->chunk}, grads[0].options());
    const variable_list slots = ZeroLayout::carve(flat, *z->unit);
    for (size_t i = 0; i < slots.size(); ++i) {
      if (grads[i].defined()) slots[i].copy_(grads[i]);
    }
    grads.clear();  // the producers' full-size gradients can go before the collective
    at::Tensor mine = reduce_scatter_unit(*z->comm, flat, z->unit->chunk, z->bucket_elems, z->wire);
    if (z->shard_on_host) mine = copy_to_host(mine, MemCategory::kBuffers);
    return {at::Tensor(), mine};
  }
};

}  // namespace

ZeroLayout::ZeroLayout(const std::vector<std::vector<Shape>>& units, int64_t world, int64_t rank)
    : world_(world), rank_(rank) {
  for (const auto& shapes : units) {
    ZeroUnit u;
    u.shapes = shapes;
    for (const Shape& s : shapes) u.numel += numel_of(s);
    u.chunk = (u.numel + world - 1) / world;
    u.offset = full_numel_;
    u.real_offset = num_params_;
    u.shard_offset = shard_numel_;
    full_numel_ += world * u.chunk;
    num_params_ += u.numel;
    shard_numel_ += u.chunk;
    units_.push_back(std::move(u));
  }
}

at::Tensor ZeroLayout::unit_of(const at::Tensor& full, const ZeroUnit& u) const {
  return full.narrow(0, u.offset, world_ * u.chunk);
}

at::Tensor ZeroLayout::chunk_of(const at::Tensor& full, const ZeroUnit& u) const {
  return full.narrow(0, u.offset + rank_ * u.chunk, u.chunk);
}

at::Tensor ZeroLayout::shard_part(const at::Tensor& shard, const ZeroUnit& u) const {
  return shard.narrow(0, u.shard_offset, u.chunk);
}

std::vector<at::Tensor> ZeroLayout::carve(const at::Tensor& unit_flat, const ZeroUnit& u) {
  std::vector<at::Tensor> out;
  int64_t at = 0;
  for (const Shape& s : u.shapes) {
    const int64_t n = numel_of(s);
    out.push_back(unit_flat.narrow(0, at, n).view(s));
    at += n;
  }
  return out;
}

at::Tensor ZeroLayout::unpadded(const at::Tensor& full) const {
  if (full_numel_ == num_params_) return full;
  at::Tensor out = at::empty({num_params_}, full.options());
  for (const ZeroUnit& u : units_) out.narrow(0, u.real_offset, u.numel).copy_(full.narrow(0, u.offset, u.numel));
  return out;
}

void ZeroLayout::load_unpadded(const at::Tensor& unpadded, at::Tensor& full) const {
  full.zero_();  // padding stays 0 (AdamW keeps a zero parameter with zero gradient at 0)
  for (const ZeroUnit& u : units_) full.narrow(0, u.offset, u.numel).copy_(unpadded.narrow(0, u.real_offset, u.numel));
}

void ZeroLayout::load_unpadded_shard(const at::Tensor& unpadded, at::Tensor& shard) const {
  shard.zero_();
  for (const ZeroUnit& u : units_) {
    const int64_t first = std::min(rank_ * u.chunk, u.numel);
    const int64_t n = std::min(u.chunk, u.numel - first);  // the last ranks' chunks may be padding only
    if (n > 0) shard_part(shard, u).narrow(0, 0, n).copy_(unpadded.narrow(0, u.real_offset + first, n));
  }
}

at::Tensor gather_shards(Comm& comm, const ZeroLayout& layout, const at::Tensor& shard) {
  if (layout.world() == 1) return shard;
  at::Tensor full = at::empty({layout.full_numel()}, shard.options());
  for (const ZeroUnit& u : layout.units()) {
    at::Tensor out = layout.unit_of(full, u);
    comm.all_gather_flat(out, layout.shard_part(shard, u));
  }
  return full;
}

at::Tensor reduce_scatter_unit(Comm& comm, const at::Tensor& unit_grad, int64_t chunk, double bucket_elems,
                               at::ScalarType wire) {
  const int64_t world = comm.world();
  const at::Tensor rows = unit_grad.view({world, chunk});  // row r: what rank r owns
  at::Tensor mine = at::empty({chunk}, unit_grad.options());
  const auto columns = static_cast<int64_t>(std::clamp<double>(bucket_elems / static_cast<double>(world), 1.0,
                                                                static_cast<double>(chunk)));
  for (int64_t col = 0; col < chunk; col += columns) {
    const int64_t n = std::min(columns, chunk - col);
    // The slab is contiguous when it spans the whole unit; otherwise a copy of at most one bucket.
    at::Tensor slab = n == chunk ? unit_grad : rows.narrow(1, col, n).contiguous().view({world * n});
    at::Tensor out = mine.narrow(0, col, n);
    if (slab.scalar_type() == wire) {
      comm.reduce_scatter_sum(out, slab);
      continue;
    }
    const at::Tensor converted = slab.to(wire);
    at::Tensor converted_out = at::empty({n}, converted.options());
    comm.reduce_scatter_sum(converted_out, converted);
    out.copy_(converted_out);
  }
  return mine;
}

std::vector<at::Tensor> zero_unit_params(const ZeroUnitContext* ctx, const at::Tensor& shard_leaf) {
  return ZeroUnitParams::apply(ctx, shard_leaf);
}

}  // namespace spplan::engine
