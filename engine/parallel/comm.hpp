// The engine's only door to collectives (c10d): Gloo on CPU, NCCL on CUDA devices.
//
// world = dp x cp x sp. Rank r has sp_rank = r % sp, cp_rank = (r / sp) % cp and dp_rank = r / (sp cp).
// Ranks [g*sp, (g+1)*sp) form SP group g (Ulysses: consecutive ranks, inside a node); the ranks with
// the same dp_rank and sp_rank form a CP group (ring attention: stride sp, across nodes), as the
// costmodel places them (planner/costmodel/ring.hpp). Together an SP group's CP ring shares one
// sequence. Gradients reduce over the whole world.
// Every call blocks until done. A failed peer surfaces as an exception from the call within the
// timeout (c10d's Gloo/NCCL errors); the caller (the rank's main) turns it into an exit code.
// Gloo has no reduce_scatter/_allgather_base (BUILD-NOTES G8): reduce_scatter_sum and
// all_gather_flat (ZeRO) are built from what Gloo has (alltoall_base, the list allgather) on CPU and
// use NCCL's native collectives on CUDA; every other call runs the same code on both.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "engine/parallel/dist_env.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

struct CommTimes {
  double all_to_all_s = 0;     // Ulysses all-to-all (forward and backward)
  double all_reduce_s = 0;     // gradient and loss all-reduce
  double reduce_scatter_s = 0; // ZeRO-2/3 gradient reduce-scatter
  double all_gather_s = 0;     // ZeRO parameter all-gather
  double ring_s = 0;           // ring attention hops: posting them and waiting for them (the part
                               // the attention blocks between did not hide)
};

// Hops in flight around the CP ring (Comm::ring_post). wait() blocks until every send and receive
// is done; the tensors given to ring_post must stay alive and unchanged until then. Destroying
// a hop that was not waited for waits for it.
class RingHop {
 public:
  RingHop() = default;
  RingHop(RingHop&&) noexcept;
  RingHop& operator=(RingHop&&) noexcept;
  RingHop(const RingHop&) = delete;
  RingHop& operator=(const RingHop&) = delete;
  ~RingHop();
  void wait();

 private:
  friend class Comm;
  std::vector<c10::intrusive_ptr<c10d::Work>> work_;
  double* ring_s_ = nullptr;  // the Comm's CommTimes::ring_s
};

// Waits for the device's queued work (CUDA); nothing on CPU. For phase timings.
void synchronize(c10::Device device);

// How long a rendezvous or a collective waits for a peer before failing: the environment variable
// SPPLAN_ENGINE_COMM_TIMEOUT_S (whole seconds, 1 to 86400), else 30 s. Large jobs whose ranks
// start minutes apart raise it; tests lower it.
Result<std::chrono::seconds> comm_timeout();

class Comm {
 public:
  // Rendezvous through a c10d TCPStore at env.master_addr:master_port (rank 0 hosts it) and builds
  // the world group, this rank's SP group and its CP group. world == 1 needs no store. Throws on
  // failure; a rank that never joins makes every other rank throw within `timeout`, naming the
  // rendezvous address. REQUIRES: sp * cp divides env.world.
  Comm(const DistEnv& env, int64_t sp, c10::Device device, std::chrono::seconds timeout, int64_t cp = 1);
  ~Comm();

  int64_t rank() const { return rank_; }
  int64_t world() const { return world_; }
  int64_t sp() const { return sp_; }
  int64_t cp() const { return cp_; }
  int64_t dp() const { return world_ / (sp_ * cp_); }
  int64_t sp_rank() const { return rank_ % sp_; }
  int64_t cp_rank() const { return (rank_ / sp_) % cp_; }
  c10::Device device() const { return device_; }  // where this rank's tensors live
  int64_t dp_rank() const { return rank_ / (sp_ * cp_); }

  // Within the SP group: dim 0 of `in` holds sp equal chunks, chunk p goes to SP rank p; `out`
  // receives chunk p from SP rank p. REQUIRES: contiguous, same shape, dim 0 == sp.
  void all_to_all_sp(at::Tensor& out, at::Tensor& in);
  // One hop around the CP ring: send[i] goes to CP rank cp_rank()+1, recv[i] is filled from CP
  // rank cp_rank()-1 (mod cp). Every send and receive is posted before this returns (on CUDA as one
  // NCCL group), so all ranks posting the same hop cannot deadlock. REQUIRES: cp() > 1; send[i]
  // and recv[i] contiguous, same shape and dtype, on device(); every rank posts the same hops in
  // the same order. Hops in flight at once take different tags (send[i] travels with tag + i).
  RingHop ring_post(const std::vector<at::Tensor>& send, const std::vector<at::Tensor>& recv, int tag = 0);
  // Over the world, in place. A CPU tensor on a CUDA rank goes through a device copy (NCCL).
  void all_reduce_sum(at::Tensor& t);
  void all_reduce_max(at::Tensor& t);
  std::vector<at::Tensor> all_gather(const at::Tensor& t);  // over the world, one tensor per rank
  // Over the world: `out` [n] = sum over ranks of chunk `rank()` of their `in` [world * n].
  // REQUIRES: both contiguous, on device(). Gloo: alltoall_base then a sum over the received
  // chunks in rank order (the same order on every rank, so all ranks agree bit for bit).
  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in);
  // Over the world: chunk r of `out` [world * n] := rank r's `in` [n]. `out` may be a view (its
  // chunks are written in place); `in` must not alias `out`.
  void all_gather_flat(at::Tensor& out, const at::Tensor& in);
  void barrier();

  const CommTimes& times() const { return times_; }
  void reset_times() { times_ = {}; }

 private:
  struct Groups;
  int64_t rank_ = 0, world_ = 1, sp_ = 1, cp_ = 1;
  c10::Device device_;
  std::unique_ptr<Groups> groups_;
  CommTimes times_;
};

}  // namespace spplan::engine
