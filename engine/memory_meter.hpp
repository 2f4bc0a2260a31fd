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
// on a GPU. The copies between the two stay real copies (engine/offload.hpp).
#pragma once

#include <array>
#include <cstdint>

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

// CUDA: peak allocated bytes of `device` since the last reset (0 when not built with CUDA).
int64_t cuda_peak_bytes(int device);
void cuda_reset_peak(int device);

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
