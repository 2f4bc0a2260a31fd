// ZeRO stages 1-3: partitioning the model state over the whole world (dp x sp), as DeepSpeed does
// under Ulysses (MEMORY-FACTS 1.3) and as the costmodel prices it (memory_states.cpp).
//
// Layout. The parameters are grouped in units, the pieces ZeRO-3 gathers and reduces at once: the
// embedding, each decoder layer, and the final norm with the head. In the full flat buffer each
// unit is padded to world * chunk elements, chunk = ceil(numel / world), and rank r owns elements
// [r chunk, (r + 1) chunk) of every unit. A rank's shard is its chunks of all units, back to back
// (one contiguous buffer of about numel / world elements). Partitioning each unit rather than the
// whole flat vector keeps every collective an equal-split one over all ranks (Gloo's list
// all-gather needs equal sizes) and lets ZeRO-3 gather one layer from everybody; the padding is
// at most world - 1 elements per unit. Unpadded, the units are the declaration order of model.hpp,
// which is also the checkpoint format (world-size independent).
//
// What each stage keeps per rank (the rest is gathered or reduced when needed):
//   stage 1: full params, full grads, AdamW moments of the shard.
//   stage 2: full params, grads and moments of the shard; each unit's gradient is reduce-scattered
//            during the backward, as soon as autograd has produced it (ZeroUnitParams below).
//   stage 3: params, grads and moments of the shard; each unit's parameters are all-gathered right
//            before use and freed after (the layers inside the checkpointed layer, model.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

using Shape = std::vector<int64_t>;

struct ZeroUnit {
  int64_t offset = 0;        // start in the full (padded) layout
  int64_t real_offset = 0;   // start in the unpadded declaration order (checkpoints)
  int64_t numel = 0;         // real elements; [numel, world * chunk) of the unit is padding
  int64_t chunk = 0;         // elements each rank owns: ceil(numel / world)
  int64_t shard_offset = 0;  // start of the owned chunk in a shard buffer (the same on every rank)
  std::vector<Shape> shapes; // the unit's parameters, packed in order from its start
};

class ZeroLayout {
 public:
  ZeroLayout() = default;
  // `units`: each unit's parameter shapes in declaration order. world 1: no padding, and the
  // shard is the full layout.
  ZeroLayout(const std::vector<std::vector<Shape>>& units, int64_t world, int64_t rank);

  int64_t world() const { return world_; }
  int64_t rank() const { return rank_; }
  const std::vector<ZeroUnit>& units() const { return units_; }
  int64_t full_numel() const { return full_numel_; }    // padded
  int64_t shard_numel() const { return shard_numel_; }
  int64_t num_params() const { return num_params_; }    // real

  // Views. `full`: a full-layout buffer; `shard`: a shard buffer.
  at::Tensor unit_of(const at::Tensor& full, const ZeroUnit& u) const;    // [world * chunk]
  at::Tensor chunk_of(const at::Tensor& full, const ZeroUnit& u) const;   // this rank's [chunk]
  at::Tensor shard_part(const at::Tensor& shard, const ZeroUnit& u) const;  // [chunk]
  // The unit's parameters as views of `unit_flat` (a [world * chunk] tensor).
  static std::vector<at::Tensor> carve(const at::Tensor& unit_flat, const ZeroUnit& u);

  // Checkpoints. The real elements of a full-layout buffer in declaration order (`full` itself
  // when there is no padding); and the way back, into a full buffer or into this rank's shard.
  at::Tensor unpadded(const at::Tensor& full) const;
  void load_unpadded(const at::Tensor& unpadded, at::Tensor& full) const;
  void load_unpadded_shard(const at::Tensor& unpadded, at::Tensor& shard) const;

 private:
  int64_t world_ = 1, rank_ = 0;
  std::vector<ZeroUnit> units_;
  int64_t full_numel_ = 0, shard_numel_ = 0, num_params_ = 0;
};

// Every rank's shard put together: a full-layout buffer (collective; `shard` itself at world 1).
at::Tensor gather_shards(Comm& comm, const ZeroLayout& layout, const at::Tensor& shard);

// Sums `unit_grad` [world * chunk] over the world and returns this rank's chunk [chunk]: in column
// slabs (the same columns of every rank's row) of at most bucket_elems elements per collective, so
// the communication buffers stay bounded by the reduce bucket; in `wire` dtype on the wire (a
// converted copy per slab when it is not the gradient's dtype).
at::Tensor reduce_scatter_unit(Comm& comm, const at::Tensor& unit_grad, int64_t chunk, double bucket_elems,
                               at::ScalarType wire);

// What ZeroUnitParams needs to know about one unit; owned by the Model, outlives every graph.
struct ZeroUnitContext {
  Comm* comm = nullptr;
  const ZeroUnit* unit = nullptr;
  at::Tensor resident;        // stage 2: the unit's range of the full params; undefined at stage 3
  double bucket_elems = 5e8;  // reduce_bucket_elems
  at::ScalarType wire = at::kFloat;  // the reduce-scatter's dtype (precision.hpp: reduce_dtype)
  c10::Device device = c10::kCPU;  // where the unit is gathered and used
  bool shard_on_host = false;      // offload_params: the shard is host memory (engine/parallel/offload.hpp)
};

// The unit's parameters (views, in declaration order) for use in the graph; `shard_leaf` is the
// autograd leaf of this rank's chunk. Forward: stage 3 all-gathers the unit into a fresh buffer
// (tagged buffers, freed when the last view dies); stage 2 hands out the resident full params.
// Backward: assembles the unit's gradient and reduce-scatters it: the owner's chunk is the
// gradient of `shard_leaf` (reduce-scatter is the adjoint of all-gather), which autograd
// accumulates into the shard grads (so grad_accum > 1 accumulates in the shard), and the
// full-size gradient dies right there. With the shard on the host (offload_params) the chunk is
// copied to the device before the gather and the reduced chunk back after the reduce-scatter.
std::vector<at::Tensor> zero_unit_params(const ZeroUnitContext* ctx, const at::Tensor& shard_leaf);

}  // namespace spplan::engine
