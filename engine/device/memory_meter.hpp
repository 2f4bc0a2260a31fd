// Measured memory of one rank, in the costmodel's categories (planner/costmodel/memory.hpp).
//
// On CPU a counting allocator replaces LibTorch's CPU allocator (BUILD-NOTES.md section 3): every
// tensor allocation is counted, tagged with the category that is current when it is made
// (MemoryScope), and untagged when freed, so the breakdown at the peak is exact for tensors.
// Freed large blocks are cached for reuse (reported apart as reserved bytes, like CUDA's
// allocator). Not counted: oneDNN/MKL scratch, Gloo's internal buffers, from_blob memory (none here).
// Grads are tagged correctly because the engine allocates them once, before the first step, and
// autograd accumulates into them in place.
// On a GPU the CUDA caching allocator's statistics give the peak (no breakdown).
//
// Host memory. On a CPU the "device" and the host are the same RAM, so what a plan offloads to the
// host (optimizer state, parameter shards, activation checkpoints) is allocated inside a
// HostScope: counted apart, in the host tallies, and left out of the device peak, as it would be
// on a GPU. The copies between the two stay real copies (engine/parallel/offload.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace spplan::engine {

enum class MemCategory : uint8_t { kOther, kParams, kGrads, kOptimizer, kActivations, kLogits, kBuffers, kCount };
inline constexpr int kMemCategories = static_cast<int>(MemCategory::kCount);
const char* mem_category_key(MemCategory c);  // "params_bytes", ...

struct MemorySnapshot {
  int64_t total_bytes = 0;
  std::array<int64_t, kMemCategories> by_category_bytes{};
};

// Installs the counting allocator. Call first thing in main(), before any tensor exists.
void install_counting_allocator();

MemorySnapshot current_memory();
MemorySnapshot peak_memory();  // the breakdown at the moment the total peaked
void reset_peak_memory();      // peak := current
// Live bytes plus freed blocks the allocator keeps for reuse (what the process holds), at its peak.
int64_t peak_reserved_bytes();

// Host memory (allocations made inside a HostScope): live now, and the largest since the reset.
MemorySnapshot current_host_memory();
MemorySnapshot peak_host_memory();

// CUDA, since the last reset: the caching allocator's peak of allocated bytes (tensors) and of
// reserved bytes (tensors plus the cached, unallocated blocks it holds), and the device memory
// in use as nvidia-smi shows it now (cudaMemGetInfo: total - free, so the CUDA context, NCCL's
// buffers, cuBLAS workspaces and other processes on the device too). Zeros without CUDA.
struct CudaMemory {
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;
  int64_t device_used_bytes = 0;
  int64_t device_total_bytes = 0;
};
CudaMemory cuda_memory(int device);
std::string cuda_device_name(int device);  // "NVIDIA H100 80GB HBM3"; "" without CUDA
// The device's memory as nvidia-smi shows it (cudaDeviceProp::totalGlobalMem), without creating a
// CUDA context in this process (cuda_memory's cudaMemGetInfo creates one). 0 without CUDA.
int64_t cuda_device_total_bytes(int device);
void cuda_reset_peak(int device);

// Out of device memory: the request that failed and the device's state at that moment.
struct OomInfo {
  int64_t tried_bytes = 0;     // the allocation that failed
  int64_t in_use_bytes = 0;    // live tensor bytes on the device
  int64_t capacity_bytes = 0;  // the device's capacity (or the emulated limit on CPU)
};
// Records every allocation failure: the CUDA allocator's out-of-memory observer on a GPU (attached
// by watch_cuda_oom), the emulated limit below on a CPU. The last one, if any.
bool last_oom(OomInfo* out);
void watch_cuda_oom();

// CPU only: emulate a device of `bytes` (0: unlimited). An allocation outside a HostScope that
// would take the device's live bytes past it throws c10::OutOfMemoryError, as CUDA's allocator
// does, so the out-of-memory path is the same one a GPU takes.
void set_device_memory_limit(int64_t bytes);
// GPU: cap what CUDA's caching allocator may reserve on `device` at `bytes` (its memory fraction:
// past it the allocator throws as on a smaller GPU). At most the device's memory.
void set_cuda_memory_limit(int device, int64_t bytes);

// CPU: called (with the meter's lock held: it must not allocate tensors) each time the device
// peak grows, from the allocating thread. The kernel clock records which op was running.
using PeakObserver = void (*)();
void set_peak_observer(PeakObserver observer);

// The category new allocations get. Autograd nodes set it during backward (see model.cpp).
MemCategory memory_category();
void set_memory_category(MemCategory c);

// Tags allocations made while it lives; nests (the innermost scope wins).
class MemoryScope {
 public:
  explicit MemoryScope(MemCategory c);
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

 private:
  MemCategory previous_;
};

// Allocations made while it lives are host memory (see above); nests.
class HostScope {
 public:
  HostScope();
  ~HostScope();
  HostScope(const HostScope&) = delete;
  HostScope& operator=(const HostScope&) = delete;

 private:
  bool previous_;
};

}  // namespace spplan::engine
