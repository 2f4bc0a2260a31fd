// The tiled loss's per-chunk cross-entropy, in place on the chunk's logits: one block per row.
// Pass 1 reads the row once for an online max and sum of exponentials (fp32, whatever the logits'
// dtype, as Liger's kernel); pass 2 reads it again (L2) and writes softmax - one_hot over it.
#include <cfloat>

#include "engine/model/cuda/common.cuh"

namespace spplan::engine::cuda {
namespace {

constexpr int kThreads = 512;

// (max, sum of exp(v - max)) of two partial rows, merged.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float top = fmaxf(m, m2);
  if (top == -FLT_MAX) return;  // both empty
  s = s * __expf(m - top) + s2 * __expf(m2 - top);
  m = top;
}

template <class T, int N>
__global__ void cross_entropy_kernel(T* logits, const int64_t* labels, float* token_loss, int64_t vocab,
                                     int64_t ignore_index) {
  __shared__ float maxes[32], sums[32];
  const int64_t row = blockIdx.x;
  T* lr = logits + row * vocab;
  const int64_t label = labels[row];
  const bool ignored = label == ignore_index;
  float m = -FLT_MAX, s = 0;
  for (int64_t c = threadIdx.x * N; c < vocab; c += blockDim.x * N) {
    const Pack<T, N> v = load<T, N>(lr + c);
#pragma unroll
    for (int k = 0; k < N; ++k) merge(m, s, to_float(v.v[k]), 1.0f);
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (lane == 0) {
    maxes[warp] = m;
    sums[warp] = s;
  }
  __syncthreads();
  m = -FLT_MAX;
  s = 0;
  for (int w = 0; w < warps; ++w) merge(m, s, maxes[w], sums[w]);  // every thread, same order
  // Each thread reads the target logit before anyone overwrites the row (pass 2 writes it).
  const bool in_range = label >= 0 && label < vocab;
  const float target = in_range ? to_float(lr[label]) : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) token_loss[row] = ignored ? 0.0f : in_range ? m + __logf(s) - target : __int_as_float(0x7fc00000);
  const float inv_sum = 1.0f / s;
  for (int64_t c = threadIdx.x * N; c < vocab; c += blockDim.x * N) {
    Pack<T, N> v = load<T, N>(lr + c);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float p = __expf(to_float(v.v[k]) - m) * inv_sum - (c + k == label ? 1.0f : 0.0f);
      v.v[k] = from_float<T>(ignored ? 0.0f : p);
    }
    store<T, N>(lr + c, v);
  }
}

}  // namespace

cudaError_t cross_entropy_grad_in_place(Dtype dtype, void* logits, const int64_t* labels, float* token_loss,
                                        int64_t rows, int64_t vocab, int64_t ignore_index, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return dispatch(dtype, vocab, {logits}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    cross_entropy_kernel<T, N><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<T*>(logits), labels, token_loss, vocab, ignore_index);
    return cudaGetLastError();
  });
}

}  // namespace spplan::engine::cuda
