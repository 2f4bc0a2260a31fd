#include "engine/device/memory_meter.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/Exception.h>
#ifdef SPPLAN_TORCH_HAS_CUDA
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace spplan::engine {
namespace {

// The header keeps the size and category; 64 bytes preserves LibTorch's 64-byte alignment.
constexpr size_t kHeaderBytes = 64;
struct Header {
  size_t bytes;
  MemCategory category;
  bool host;
};
static_assert(sizeof(Header) <= kHeaderBytes);

// Freed blocks of at least this size are kept for reuse: a training step frees and allocates the
// same sizes every step, and reusing a block skips the page faults of fresh memory (several % of
// a CPU step). Cached bytes stay below the peak of live bytes, so reserved <= 2 x peak.
constexpr size_t kCacheMinBytes = size_t{1} << 20;

std::mutex g_mutex;  // allocation is rare enough (thousands per step) that a lock costs nothing
MemorySnapshot g_current, g_peak;            // device
MemorySnapshot g_host_current, g_host_peak;  // allocations made inside a HostScope
int64_t g_cached_bytes = 0, g_peak_reserved_bytes = 0;
std::unordered_map<size_t, std::vector<void*>> g_free_blocks;  // by requested size
MemCategory g_category = MemCategory::kOther;  // set by the training thread only
bool g_host = false;                            // likewise
int64_t g_device_limit_bytes = 0;               // set_device_memory_limit; 0: none
OomInfo g_last_oom;
bool g_had_oom = false;

// REQUIRES: g_mutex held. One tally (device or host): the live bytes, and the breakdown at its peak.
void add(MemorySnapshot& current, MemorySnapshot& peak, MemCategory c, int64_t delta_bytes) {
  current.total_bytes += delta_bytes;
  current.by_category_bytes[static_cast<int>(c)] += delta_bytes;
  if (current.total_bytes > peak.total_bytes) peak = current;
}

// REQUIRES: g_mutex held.
PeakObserver g_peak_observer = nullptr;

void account(MemCategory c, bool host, int64_t delta_bytes) {
  if (host) return add(g_host_current, g_host_peak, c, delta_bytes);
  const int64_t peak_before = g_peak.total_bytes;
  add(g_current, g_peak, c, delta_bytes);
  if (g_peak_observer != nullptr && g_peak.total_bytes > peak_before) g_peak_observer();
  g_peak_reserved_bytes = std::max(g_peak_reserved_bytes, g_current.total_bytes + g_cached_bytes);
}

[[noreturn]] void throw_emulated_oom(size_t bytes) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  TORCH_CHECK_WITH(OutOfMemoryError, false, "emulated device out of memory: tried to allocate ",
                   static_cast<double>(bytes) / gib, " GiB with ", static_cast<double>(g_last_oom.in_use_bytes) / gib,
                   " GiB in use of a ", static_cast<double>(g_device_limit_bytes) / gib, " GiB limit");
}

void* take_block(size_t bytes, MemCategory c, bool host) {
  std::unique_lock<std::mutex> lock(g_mutex);
  if (!host && g_device_limit_bytes > 0 && g_current.total_bytes + static_cast<int64_t>(bytes) > g_device_limit_bytes) {
    g_last_oom = {static_cast<int64_t>(bytes), g_current.total_bytes, g_device_limit_bytes};
    g_had_oom = true;
    lock.unlock();
    throw_emulated_oom(bytes);
  }
  void* base = nullptr;
  if (auto it = g_free_blocks.find(bytes); it != g_free_blocks.end() && !it->second.empty()) {
    base = it->second.back();
    it->second.pop_back();
    g_cached_bytes -= static_cast<int64_t>(bytes);
  }
  account(c, host, static_cast<int64_t>(bytes));
  return base;
}

void counting_delete(void* data) {
  void* base = static_cast<char*>(data) - kHeaderBytes;
  const auto* h = static_cast<Header*>(base);
  const size_t bytes = h->bytes;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    account(h->category, h->host, -static_cast<int64_t>(bytes));
    if (bytes >= kCacheMinBytes && g_cached_bytes + static_cast<int64_t>(bytes) <= g_peak.total_bytes) {
      g_free_blocks[bytes].push_back(base);
      g_cached_bytes += static_cast<int64_t>(bytes);
      return;
    }
  }
  c10::free_cpu(base);
}

// ctx == data (BUILD-NOTES G3): raw_allocate() asserts it.
struct CountingCpuAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    const MemCategory c = g_category;
    const bool host = g_host;
    void* base = take_block(bytes, c, host);
    if (base == nullptr) base = c10::alloc_cpu(bytes + kHeaderBytes);
    new (base) Header{bytes, c, host};
    void* data = static_cast<char*>(base) + kHeaderBytes;
    return {data, data, &counting_delete, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &counting_delete; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

CountingCpuAllocator g_allocator;  // SetCPUAllocator does not take ownership: static lifetime

}  // namespace

const char* mem_category_key(MemCategory c) {
  static constexpr const char* kKeys[] = {"other_bytes",       "params_bytes", "grads_bytes",  "optimizer_bytes",
                                          "activations_bytes", "logits_bytes", "buffers_bytes"};
  return kKeys[static_cast<int>(c)];
}

void install_counting_allocator() { c10::SetCPUAllocator(&g_allocator, /*priority=*/10); }

int64_t peak_reserved_bytes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_peak_reserved_bytes;
}

MemorySnapshot current_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_current;
}

MemorySnapshot peak_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_peak;
}

MemorySnapshot current_host_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_host_current;
}

MemorySnapshot peak_host_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_host_peak;
}

void reset_peak_memory() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_peak = g_current;
  g_host_peak = g_host_current;
  g_peak_reserved_bytes = g_current.total_bytes + g_cached_bytes;
}

void set_peak_observer(PeakObserver observer) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_peak_observer = observer;
}

MemCategory memory_category() { return g_category; }
void set_memory_category(MemCategory c) { g_category = c; }

MemoryScope::MemoryScope(MemCategory c) : previous_(g_category) { g_category = c; }
MemoryScope::~MemoryScope() { g_category = previous_; }

HostScope::HostScope() : previous_(g_host) { g_host = true; }
HostScope::~HostScope() { g_host = previous_; }

void set_device_memory_limit(int64_t bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_device_limit_bytes = bytes;
}

bool last_oom(OomInfo* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_had_oom) *out = g_last_oom;
  return g_had_oom;
}

#ifdef SPPLAN_TORCH_HAS_CUDA
CudaMemory cuda_memory(int device) {
  namespace alloc = c10::cuda::CUDACachingAllocator;
  const auto stats = alloc::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  CudaMemory m;
  m.peak_allocated_bytes = stats.allocated_bytes[0].peak;  // [0]: StatType::AGGREGATE
  m.peak_reserved_bytes = stats.reserved_bytes[0].peak;
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    m.device_used_bytes = static_cast<int64_t>(total_bytes - free_bytes);
    m.device_total_bytes = static_cast<int64_t>(total_bytes);
  }
  return m;
}
std::string cuda_device_name(int device) {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, device) == cudaSuccess ? std::string(prop.name) : std::string();
}
int64_t cuda_device_total_bytes(int device) {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, device) == cudaSuccess ? static_cast<int64_t>(prop.totalGlobalMem) : 0;
}
void cuda_reset_peak(int device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
}
void set_cuda_memory_limit(int device, int64_t bytes) {
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);  // the allocator exists from here
  const double fraction = static_cast<double>(bytes) / static_cast<double>(cuda_device_total_bytes(device));
  c10::cuda::CUDACachingAllocator::setMemoryFraction(std::min(1.0, fraction), static_cast<c10::DeviceIndex>(device));
}
// The observer runs inside the allocator, before it throws: it may not allocate device memory.
void watch_cuda_oom() {
  c10::cuda::CUDACachingAllocator::attachOutOfMemoryObserver(
      [](int64_t device, size_t tried, size_t total, size_t /*free*/) {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
        std::lock_guard<std::mutex> lock(g_mutex);
        g_last_oom = {static_cast<int64_t>(tried), stats.allocated_bytes[0].current, static_cast<int64_t>(total)};
        g_had_oom = true;
      });
}
#else
CudaMemory cuda_memory(int) { return {}; }
std::string cuda_device_name(int) { return {}; }
int64_t cuda_device_total_bytes(int) { return 0; }
void cuda_reset_peak(int) {}
void set_cuda_memory_limit(int, int64_t) {}
void watch_cuda_oom() {}
#endif

}  // namespace spplan::engine
