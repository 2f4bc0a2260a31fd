// The tiled loss's per-chunk cross-entropy, in place on the chunk's logits, in two launches over
// the same blocks: each row is cut into `splits` column ranges, a block per (row, range).
// 1. Each block reads its range once for an online max and sum of exponentials (fp32, whatever the
//    logits' dtype, as Liger's kernel) and writes them to `partials`.
// 2. Each block merges its row's partials (in one order: every block of a row gets the same sums),
//    the block holding the label writes the token's loss, and every block writes softmax - one_hot
//    over its range (a second read of the range, mostly from L2).
// A block per row (2026-11-26, validation/gpu) ran at 37 % of the H100's HBM bandwidth: a chunk
// has about h / V of the tokens (128 rows at 16K tokens of Qwen3-0.6B), fewer than its 132 SMs.
#include <cfloat>

#include "engine/model/cuda/common.cuh"

namespace spplan::engine::cuda {
namespace {

// (max, sum of exp(v - max)) of two partial rows, merged.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float top = fmaxf(m, m2);
  if (top == -FLT_MAX) return;  // both empty
  s = s * __expf(m - top) + s2 * __expf(m2 - top);
  m = top;
}

template <class T, int N>
__global__ void cross_entropy_stats_kernel(const T* logits, float* partials, int splits, int64_t vocab) {
  __shared__ float maxes[32], sums[32];
  const int64_t row = blockIdx.x / splits;
  const int split = static_cast<int>(blockIdx.x % splits);
  const ColumnRange range = ce_range(split, splits, vocab, N);
  const T* lr = logits + row * vocab;
  float m = -FLT_MAX, s = 0;
  for (int64_t c = range.begin + threadIdx.x * N; c < range.end; c += blockDim.x * N) {
    const Pack<T, N> v = load<T, N>(lr + c);
    float top = m;  // one exponential per element and one per pack (merging each element took two)
#pragma unroll
    for (int k = 0; k < N; ++k) top = fmaxf(top, to_float(v.v[k]));
    if (top > m) {
      s *= __expf(m - top);
      m = top;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) s += __expf(to_float(v.v[k]) - m);
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
  if (threadIdx.x == 0) {
    m = -FLT_MAX;
    s = 0;
    for (int w = 0; w < warps; ++w) merge(m, s, maxes[w], sums[w]);
    partials[2 * blockIdx.x] = m;
    partials[2 * blockIdx.x + 1] = s;
  }
}

template <class T, int N>
__global__ void cross_entropy_grad_kernel(T* logits, const int64_t* labels, const float* partials, float* token_loss,
                                          int splits, int64_t vocab, int64_t ignore_index) {
  __shared__ float stats[2];
  const int64_t row = blockIdx.x / splits;
  const int split = static_cast<int>(blockIdx.x % splits);
  const ColumnRange range = ce_range(split, splits, vocab, N);
  T* lr = logits + row * vocab;
  const int64_t label = labels[row];
  const bool ignored = label == ignore_index, in_range = label >= 0 && label < vocab;
  if (threadIdx.x == 0) {
    float m = -FLT_MAX, s = 0;
    const float* mine = partials + 2 * row * splits;  // this row's (max, sum) pairs
    for (int i = 0; i < splits; ++i) merge(m, s, mine[2 * i], mine[2 * i + 1]);
    stats[0] = m;
    stats[1] = s;
    // The target logit is read before this block writes its range (the only range that holds it).
    if (!ignored && in_range && label >= range.begin && label < range.end) {
      token_loss[row] = m + __logf(s) - to_float(lr[label]);
    } else if (split == 0 && (ignored || !in_range)) {
      token_loss[row] = ignored ? 0.0f : __int_as_float(0x7fc00000);
    }
  }
  __syncthreads();
  const float m = stats[0], inv_sum = 1.0f / stats[1];
  for (int64_t c = range.begin + threadIdx.x * N; c < range.end; c += blockDim.x * N) {
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
                                        float* partials, int splits, int64_t rows, int64_t vocab,
                                        int64_t ignore_index, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  if (splits < 1 || rows * splits > 0x7fffffff) return cudaErrorInvalidValue;
  const auto blocks = static_cast<unsigned>(rows * splits);
  return dispatch(dtype, vocab, {logits}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    cross_entropy_stats_kernel<T, N><<<blocks, kCeThreads, 0, stream>>>(static_cast<const T*>(logits), partials,
                                                                      splits, vocab);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    cross_entropy_grad_kernel<T, N><<<blocks, kCeThreads, 0, stream>>>(static_cast<T*>(logits), labels, partials,
                                                                     token_loss, splits, vocab, ignore_index);
    return cudaGetLastError();
  });
}

}  // namespace spplan::engine::cuda
