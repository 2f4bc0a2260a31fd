// RMSNorm fused with the residual add, forward and backward: one block per row (the backward's
// blocks walk rows with a stride and keep the weight gradient's partial sums in shared memory).
// A block has one thread per 16-byte pack of the row, up to kNormMaxThreads (launch_shapes.hpp):
// on the H100 (2026-11-26, validation/gpu) 256 threads on 1024-wide bf16 rows left half of them
// idle (forward 66-78 % of HBM bandwidth, backward 32-48 %).
#include "engine/model/cuda/common.cuh"

namespace spplan::engine::cuda {
namespace {

// Pass 1 writes the rounded sum and accumulates its squares; pass 2 reads back what this same
// thread wrote (an L2 hit, not a second HBM read) and writes y.
template <class T, int N>
__global__ void add_rms_norm_forward_kernel(const T* residual, const T* x, const T* weight, T* sum, T* y,
                                            float* rstd, int64_t h, float eps) {
  __shared__ float scratch[33];
  const int64_t row = blockIdx.x;
  const T* xr = x + row * h;
  T* sr = residual != nullptr ? sum + row * h : nullptr;
  float squares = 0;
  for (int64_t c = threadIdx.x * N; c < h; c += blockDim.x * N) {
    Pack<T, N> xv = load<T, N>(xr + c);
    if (residual != nullptr) {
      const Pack<T, N> rv = load<T, N>(residual + row * h + c);
#pragma unroll
      for (int k = 0; k < N; ++k) xv.v[k] = from_float<T>(to_float(rv.v[k]) + to_float(xv.v[k]));
      store<T, N>(sr + c, xv);
    }
#pragma unroll
    for (int k = 0; k < N; ++k) squares += to_float(xv.v[k]) * to_float(xv.v[k]);
  }
  const float r = 1.0f / sqrtf(block_sum(squares, scratch) / static_cast<float>(h) + eps);
  if (threadIdx.x == 0) rstd[row] = r;
  const T* s = residual != nullptr ? sr : xr;
  for (int64_t c = threadIdx.x * N; c < h; c += blockDim.x * N) {
    const Pack<T, N> sv = load<T, N>(s + c), wv = load<T, N>(weight + c);
    Pack<T, N> out;
#pragma unroll  // HF's order: the normalised value is rounded to the dtype before the weight multiplies it
    for (int k = 0; k < N; ++k) out.v[k] = from_float<T>(to_float(wv.v[k]) * round_to<T>(to_float(sv.v[k]) * r));
    store<T, N>(y + row * h + c, out);
  }
}

template <class T, int N>
__global__ void add_rms_norm_backward_kernel(const T* dy, const T* dsum_in, const T* sum, const T* weight,
                                             const float* rstd, T* dx, float* dw_partial, int64_t rows, int64_t h) {
  extern __shared__ float dw[];  // [norm_dw_span]: this block's partial weight gradient, at norm_dw_slot
  __shared__ float scratch[33];
  const int64_t threads = blockDim.x, span = norm_dw_span(h, threads, N);
  for (int64_t c = threadIdx.x; c < span; c += threads) dw[c] = 0;
  __syncthreads();
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float r = rstd[row];
    const T *dyr = dy + row * h, *sr = sum + row * h;
    float dot = 0;  // sum over the row of dn * n
    for (int64_t c = threadIdx.x * N; c < h; c += blockDim.x * N) {
      const Pack<T, N> dv = load<T, N>(dyr + c), sv = load<T, N>(sr + c), wv = load<T, N>(weight + c);
      // norm_dw_slot(c) without a division; column c + k at slots[k * threads].
      float* slots = dw + (c - static_cast<int64_t>(threadIdx.x) * (N - 1));
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float n = to_float(sv.v[k]) * r, g = to_float(dv.v[k]);
        dot += g * to_float(wv.v[k]) * n;
        slots[k * threads] += g * n;  // this thread owns columns c .. c + N - 1 in every row
      }
    }
    const float mean_dot = block_sum(dot, scratch) / static_cast<float>(h);
    for (int64_t c = threadIdx.x * N; c < h; c += blockDim.x * N) {
      const Pack<T, N> dv = load<T, N>(dyr + c), sv = load<T, N>(sr + c), wv = load<T, N>(weight + c);
      Pack<T, N> in{};
      if (dsum_in != nullptr) in = load<T, N>(dsum_in + row * h + c);
      Pack<T, N> out;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float n = to_float(sv.v[k]) * r, dn = to_float(dv.v[k]) * to_float(wv.v[k]);
        const float extra = dsum_in != nullptr ? to_float(in.v[k]) : 0.0f;
        out.v[k] = from_float<T>(r * (dn - n * mean_dot) + extra);
      }
      store<T, N>(dx + row * h + c, out);
    }
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < h; c += threads) dw_partial[blockIdx.x * h + c] = dw[norm_dw_slot(c, threads, N)];
}

}  // namespace

int weight_grad_blocks(int64_t rows) {
  // Enough blocks to fill an H100 (132 SMs) a few times over; fewer rows need fewer.
  return static_cast<int>(rows < 1024 ? (rows > 0 ? rows : 1) : 1024);
}

cudaError_t add_rms_norm_forward(Dtype dtype, const void* residual, const void* x, const void* weight, void* sum,
                                 void* y, float* rstd, int64_t rows, int64_t h, float eps, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  return dispatch(dtype, h, {residual, x, weight, sum, y}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    const int threads = threads_for_packs(h / N, kNormMaxThreads);
    add_rms_norm_forward_kernel<T, N><<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        static_cast<const T*>(residual), static_cast<const T*>(x), static_cast<const T*>(weight),
        static_cast<T*>(sum), static_cast<T*>(y), rstd, h, eps);
    return cudaGetLastError();
  });
}

cudaError_t add_rms_norm_backward(Dtype dtype, const void* dy, const void* dsum_in, const void* sum,
                                  const void* weight, const float* rstd, void* dx, float* dw_partial, int blocks,
                                  int64_t rows, int64_t h, cudaStream_t stream) {
  return dispatch(dtype, h, {dy, dsum_in, sum, weight, dx}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    const int threads = threads_for_packs(h / N, kNormMaxThreads);
    const size_t shared = static_cast<size_t>(norm_dw_span(h, threads, N)) * sizeof(float);
    if (shared > 48 * 1024) return cudaErrorInvalidValue;
    add_rms_norm_backward_kernel<T, N><<<blocks, threads, shared, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(dsum_in), static_cast<const T*>(sum),
        static_cast<const T*>(weight), rstd, static_cast<T*>(dx), dw_partial, rows, h);
    return cudaGetLastError();
  });
}

}  // namespace spplan::engine::cuda
