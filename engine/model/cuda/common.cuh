// Shared pieces of the engine's CUDA kernels: dtype conversions (fp32 arithmetic, one rounding on
// the store), 16-byte vector loads, warp and block sums, and the dispatch on dtype and width.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "engine/model/cuda/launch.hpp"
#include "engine/model/cuda/launch_shapes.hpp"

namespace spplan::engine::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>  // round to nearest even, as ATen's float -> bfloat16 conversion
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// T rounded through the storage dtype and back (what a stored-then-loaded value is).
template <class T>
__device__ __forceinline__ float round_to(float v) { return to_float(from_float<T>(v)); }

// N consecutive elements, loaded and stored as one access (16 bytes when N * sizeof(T) == 16).
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};
template <class T, int N>
__device__ __forceinline__ Pack<T, N> load(const T* p) { return *reinterpret_cast<const Pack<T, N>*>(p); }
template <class T, int N>
__device__ __forceinline__ void store(T* p, const Pack<T, N>& pack) { *reinterpret_cast<Pack<T, N>*>(p) = pack; }

// Sum over a group of `lanes` lanes (a power of two, aligned in the warp). Every lane of the warp
// calls it (the shuffles name the whole warp), each group gets its own sum.
__device__ __forceinline__ float group_sum(float v, int lanes) {
  for (int offset = lanes / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_sum(float v) { return group_sum(v, 32); }

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// `scratch`: 33 floats of shared memory, free to reuse after the call returns.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < warps ? scratch[lane] : 0.0f);
    if (lane == 0) scratch[32] = v;
  }
  __syncthreads();
  return scratch[32];
}

// 16 bytes of T per access when that divides the length and every pointer is 16-byte aligned (the
// engine's shapes: hidden, head and MLP sizes are multiples of 8), else one element. Two widths
// only, so each kernel is compiled four times (two dtypes), not eight.
template <class T>
inline bool packs_fit(int64_t length, std::initializer_list<const void*> pointers) {
  constexpr int64_t n = 16 / sizeof(T);
  if (length % n != 0) return false;
  for (const void* p : pointers) {
    if (p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

// Calls launch(T{}, std::integral_constant<int, N>{}) for the dtype and the pack width.
template <class Launch>
cudaError_t dispatch(Dtype dtype, int64_t length, std::initializer_list<const void*> pointers, Launch&& launch) {
  auto with = [&](auto type_tag) -> cudaError_t {
    using T = decltype(type_tag);
    if (packs_fit<T>(length, pointers)) return launch(T{}, std::integral_constant<int, static_cast<int>(16 / sizeof(T))>{});
    return launch(T{}, std::integral_constant<int, 1>{});
  };
  return dtype == Dtype::kBFloat16 ? with(__nv_bfloat16{}) : with(float{});
}

}  // namespace spplan::engine::cuda
