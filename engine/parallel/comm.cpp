#include "engine/parallel/comm.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#ifdef SPPLAN_TORCH_HAS_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "planner/core/parse.hpp"

namespace spplan::engine {

struct Comm::Groups {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> world;  // null when world == 1
  c10::intrusive_ptr<c10d::Backend> sp;     // null when sp == 1
  c10::intrusive_ptr<c10d::Backend> cp;     // null when cp == 1
};

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr std::chrono::seconds kDefaultTimeout{30};  // a dead peer ends a collective within this

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

bool is_loopback(const std::string& addr) { return addr == "127.0.0.1" || addr == "localhost" || addr == "::1"; }

c10::intrusive_ptr<c10d::Backend> make_backend(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank,
                                               int64_t size, c10::Device device, std::chrono::seconds timeout,
                                               bool local) {
  if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, static_cast<int>(rank), static_cast<int>(size), opts);
#else
    TORCH_CHECK(false, "this LibTorch has no NCCL; CUDA tensors cannot be communicated");
#endif
  }
  // C++ must fill Gloo's devices itself (BUILD-NOTES section 2). All ranks on this machine: loopback,
  // which works even where the hostname does not resolve. Otherwise LibTorch's default: the
  // interfaces in GLOO_SOCKET_IFNAME, else this host's name.
  auto opts = local ? c10d::ProcessGroupGloo::Options::create(timeout) : c10d::ProcessGroupGloo::Options::create_default(timeout);
  if (local) opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  opts->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, static_cast<int>(rank), static_cast<int>(size), opts);
}

c10::intrusive_ptr<c10d::Store> make_store(const DistEnv& env, std::chrono::seconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(env.master_port);
  o.isServer = env.rank == 0;
  o.numWorkers = static_cast<size_t>(env.world);
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
}

// Gloo's worker thread holds a finished Work, and with it the collective's tensors, a moment
// after wait() returns (ProcessGroupGloo::runLoop drops its references after AsyncWork::execute
// has completed the future). Until it lets go, a send buffer the caller has dropped stays
// allocated, and whether the next allocation finds it freed is a race: one step of micro-llama
// at 16K tokens on sp 4 peaked at 19.5 or 21.1 MiB from run to run. Waiting for that last
// reference (microseconds; bounded) frees the buffers as a synchronous collective would, so a
// step's memory does not depend on thread timing. NCCL's watchdog keeps its works for longer and
// the CUDA caching allocator orders frees by stream, so this is Gloo's only.
void run(const c10::intrusive_ptr<c10d::Work>& work) {
  work->wait();
  if (dynamic_cast<c10d::ProcessGroupGloo::AsyncWork*>(work.get()) == nullptr) return;
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (work.use_count() > 1 && Clock::now() < deadline) std::this_thread::yield();
}

void all_reduce(c10d::Backend& group, c10::Device device, at::Tensor& t, c10d::ReduceOp::RedOpType op) {
  at::Tensor on_device = t.device() == device ? t : t.to(device);
  std::vector<at::Tensor> v{on_device};
  c10d::AllreduceOptions opts;
  opts.reduceOp = op;
  run(group.allreduce(v, opts));
  if (!on_device.is_same(t)) t.copy_(on_device);
}

}  // namespace

void synchronize(c10::Device device) {
#ifdef SPPLAN_TORCH_HAS_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

Result<std::chrono::seconds> comm_timeout() {
  const char* v = std::getenv("SPPLAN_ENGINE_COMM_TIMEOUT_S");
  if (v == nullptr) return kDefaultTimeout;
  constexpr int64_t kMaxSeconds = 86400;  // a day: beyond it a hung job is better stopped
  SPPLAN_ASSIGN_OR_RETURN(const int64_t s, parse_int("environment variable SPPLAN_ENGINE_COMM_TIMEOUT_S", v, 1, kMaxSeconds));
  return std::chrono::seconds(s);
}

Comm::Comm(const DistEnv& env, int64_t sp, c10::Device device, std::chrono::seconds timeout, int64_t cp)
    : rank_(env.rank), world_(env.world), sp_(sp), cp_(cp), device_(device), groups_(std::make_unique<Groups>()) {
  TORCH_CHECK(sp_ >= 1 && cp_ >= 1 && world_ % (sp_ * cp_) == 0, "Comm: sp x cp must divide the world");
  if (world_ == 1) return;
  // c10d's own message ("Timed out after 30 seconds waiting for clients. 1/2 clients joined.")
  // does not say which address nor what to do; a rank started late or not at all lands here.
  try {
    groups_->store = make_store(env, timeout);
    auto world_store = c10::make_intrusive<c10d::PrefixStore>("world", groups_->store);
    const bool local = is_loopback(env.master_addr);
    groups_->world = make_backend(world_store, rank_, world_, device, timeout, local);
    if (sp_ > 1) {
      // SP group g = rank / sp: consecutive ranks (with cp 1, g is the dp rank as before).
      auto sp_store = c10::make_intrusive<c10d::PrefixStore>("sp" + std::to_string(rank_ / sp_), groups_->store);
      groups_->sp = make_backend(sp_store, sp_rank(), sp_, device, timeout, local);
    }
    if (cp_ > 1) {  // the ring of this (dp rank, sp rank): stride sp
      const int64_t ring = dp_rank() * sp_ + sp_rank();
      auto cp_store = c10::make_intrusive<c10d::PrefixStore>("cp" + std::to_string(ring), groups_->store);
      groups_->cp = make_backend(cp_store, cp_rank(), cp_, device, timeout, local);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("rendezvous at " + env.master_addr + ":" + std::to_string(env.master_port) +
                             " failed within " + std::to_string(timeout.count()) + " s: " + first_line(e.what()) +
                             " (allowed: all " + std::to_string(world_) +
                             " ranks started with the same MASTER_ADDR and MASTER_PORT;"
                             " SPPLAN_ENGINE_COMM_TIMEOUT_S sets the wait)");
  }
}

Comm::~Comm() = default;

void Comm::all_to_all_sp(at::Tensor& out, at::Tensor& in) {
  TORCH_CHECK(in.is_contiguous() && out.is_contiguous() && in.size(0) == sp_, "all_to_all_sp: bad buffers");
  const auto t0 = Clock::now();
  if (sp_ == 1) {
    out.copy_(in);
  } else {
    std::vector<int64_t> equal_splits;  // empty = equal chunks along dim 0
    run(groups_->sp->alltoall_base(out, in, equal_splits, equal_splits));
  }
  times_.all_to_all_s += seconds_since(t0);
}

RingHop::RingHop(RingHop&& o) noexcept : work_(std::move(o.work_)), ring_s_(o.ring_s_) { o.work_.clear(); }

RingHop& RingHop::operator=(RingHop&& o) noexcept {
  if (this != &o) {
    wait();
    work_ = std::move(o.work_);
    o.work_.clear();
    ring_s_ = o.ring_s_;
  }
  return *this;
}

RingHop::~RingHop() {
  try {
    wait();
  } catch (...) {  // a destructor must not throw; the failure surfaced (or will) at the next call
  }
}

void RingHop::wait() {
  if (work_.empty()) return;
  const auto t0 = Clock::now();
  for (const auto& w : work_) w->wait();
  work_.clear();
  if (ring_s_ != nullptr) *ring_s_ += seconds_since(t0);
}

RingHop Comm::ring_post(const std::vector<at::Tensor>& send, const std::vector<at::Tensor>& recv, int tag) {
  TORCH_CHECK(cp_ > 1 && send.size() == recv.size(), "ring_post: needs cp > 1 and one receive per send");
  const auto t0 = Clock::now();
  const int next = static_cast<int>((cp_rank() + 1) % cp_), prev = static_cast<int>((cp_rank() + cp_ - 1) % cp_);
  RingHop hop;
  hop.ring_s_ = &times_.ring_s;
  c10d::Backend& ring = *groups_->cp;
  // NCCL serialises a pair's sends and receives on one stream: with cp 2 (next == prev) a send
  // posted alone would wait for a receive queued behind it. One group (batch_isend_irecv) avoids it.
  const bool grouped = device_.is_cuda();
  if (grouped) ring.startCoalescing();
  for (size_t i = 0; i < send.size(); ++i) {
    TORCH_CHECK(send[i].is_contiguous() && recv[i].is_contiguous() && send[i].sizes() == recv[i].sizes(),
                "ring_post: bad buffers");
    std::vector<at::Tensor> s{send[i]}, r{recv[i]};
    const int t = tag + static_cast<int>(i);  // Gloo matches a send to a receive by peer and tag
    auto sw = ring.send(s, next, t);
    auto rw = ring.recv(r, prev, t);
    if (!grouped) hop.work_.insert(hop.work_.end(), {sw, rw});
  }
  if (grouped) hop.work_.push_back(ring.endCoalescing());
  times_.ring_s += seconds_since(t0);
  return hop;
}

void Comm::all_reduce_sum(at::Tensor& t) {
  if (world_ == 1) return;
  const auto t0 = Clock::now();
  all_reduce(*groups_->world, device_, t, c10d::ReduceOp::SUM);
  times_.all_reduce_s += seconds_since(t0);
}

void Comm::all_reduce_max(at::Tensor& t) {
  if (world_ == 1) return;
  all_reduce(*groups_->world, device_, t, c10d::ReduceOp::MAX);
}

std::vector<at::Tensor> Comm::all_gather(const at::Tensor& t) {
  if (world_ == 1) return {t.clone()};
  std::vector<at::Tensor> in{t.to(device_).contiguous()};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int64_t r = 0; r < world_; ++r) out[0].push_back(at::empty_like(in[0]));
  run(groups_->world->allgather(out, in));  // list form: Gloo lacks _allgather_base
  for (auto& o : out[0]) o = o.to(t.device());
  return out[0];
}

void Comm::reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) {
  TORCH_CHECK(in.is_contiguous() && out.is_contiguous() && in.numel() == world_ * out.numel(),
              "reduce_scatter_sum: bad buffers");
  if (world_ == 1) {
    out.copy_(in);
    return;
  }
  const auto t0 = Clock::now();
  at::Tensor send = in;  // c10d takes non-const references
  if (device_.is_cuda()) {
    run(groups_->world->_reduce_scatter_base(out, send));
  } else {
    // Chunk p of `in` goes to rank p; we receive every rank's chunk `rank_` and add them up.
    at::Tensor received = at::empty_like(in);
    std::vector<int64_t> equal_splits;
    run(groups_->world->alltoall_base(received, send, equal_splits, equal_splits));
    at::sum_out(out, received.view({world_, out.numel()}), {0});
  }
  times_.reduce_scatter_s += seconds_since(t0);
}

void Comm::all_gather_flat(at::Tensor& out, const at::Tensor& in) {
  TORCH_CHECK(in.is_contiguous() && out.numel() == world_ * in.numel() && out.dim() == 1, "all_gather_flat: bad buffers");
  if (world_ == 1) {
    out.copy_(in);
    return;
  }
  const auto t0 = Clock::now();
  std::vector<at::Tensor> input{in};
  if (device_.is_cuda() && out.is_contiguous()) {
    run(groups_->world->_allgather_base(out, input[0]));
  } else {
    // The list form (Gloo lacks _allgather_base): it gathers into its own flat buffer and copies
    // into each output, so views of `out` are fine.
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int64_t r = 0; r < world_; ++r) outputs[0].push_back(out.narrow(0, r * in.numel(), in.numel()));
    run(groups_->world->allgather(outputs, input));
  }
  times_.all_gather_s += seconds_since(t0);
}

void Comm::barrier() {
  if (world_ > 1) run(groups_->world->barrier());
}

}  // namespace spplan::engine
