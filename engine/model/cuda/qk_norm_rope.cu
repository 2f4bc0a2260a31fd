// Per-head q/k RMSNorm fused with rotate-half RoPE: a group of lanes per (token, head) row of d
// elements; lane l of a group handles the pairs (j, j + d/2) for j in its packs of the first half,
// which is what RoPE mixes, so a row needs no exchange between lanes beyond two group sums.
// A group has one lane per 16-byte pack of the half row (at most the warp): a warp works on
// 32 / lanes rows at once. A warp per row (2026-11-26, validation/gpu) left 24 of 32 lanes idle
// at d = 128 in bf16 and ran at 18-24 % of the H100's HBM bandwidth.
#include <numeric>

#include "engine/model/cuda/common.cuh"

namespace spplan::engine::cuda {
namespace {

template <class T, int N>
__global__ void qk_norm_rope_forward_kernel(const T* x, int64_t token_stride, const T* weight, const T* cos,
                                            const T* sin, int64_t positions, T* y, float* rstd, int64_t tokens,
                                            int64_t heads, int64_t d, float eps, int lanes) {
  const int lane = threadIdx.x % 32;
  const int64_t row = qk_row(qk_warp_first_row(blockIdx.x, threadIdx.x, lanes), threadIdx.x, lanes);
  // A lane past the last row still takes part in its group's sum (the shuffles need the whole warp).
  const bool valid = row < tokens * heads;
  const int64_t token = valid ? row / heads : 0, half = d / 2, end = valid ? half : 0;
  const T* xr = x + token * token_stride + (valid ? row % heads : 0) * d;
  const T *cr = cos + (token % positions) * half, *sr = sin + (token % positions) * half;
  const int64_t first = static_cast<int64_t>(lane % lanes) * N, step = static_cast<int64_t>(lanes) * N;
  float squares = 0;
  for (int64_t j = first; j < end; j += step) {
    const Pack<T, N> a = load<T, N>(xr + j), b = load<T, N>(xr + half + j);
#pragma unroll
    for (int k = 0; k < N; ++k) squares += to_float(a.v[k]) * to_float(a.v[k]) + to_float(b.v[k]) * to_float(b.v[k]);
  }
  const float r = 1.0f / sqrtf(group_sum(squares, lanes) / static_cast<float>(d) + eps);
  if (valid && lane % lanes == 0) rstd[row] = r;
  for (int64_t j = first; j < end; j += step) {
    const Pack<T, N> a = load<T, N>(xr + j), b = load<T, N>(xr + half + j);
    const Pack<T, N> wa = load<T, N>(weight + j), wb = load<T, N>(weight + half + j);
    const Pack<T, N> c = load<T, N>(cr + j), s = load<T, N>(sr + j);
    Pack<T, N> out1, out2;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      // The norm's output as HF stores it (normalised value rounded, times the weight, rounded).
      const float y1 = round_to<T>(to_float(wa.v[k]) * round_to<T>(to_float(a.v[k]) * r));
      const float y2 = round_to<T>(to_float(wb.v[k]) * round_to<T>(to_float(b.v[k]) * r));
      const float cf = to_float(c.v[k]), sf = to_float(s.v[k]);
      out1.v[k] = from_float<T>(y1 * cf - y2 * sf);
      out2.v[k] = from_float<T>(y2 * cf + y1 * sf);
    }
    store<T, N>(y + row * d + j, out1);
    store<T, N>(y + row * d + half + j, out2);
  }
}

// RoPE's adjoint first (dy -> the gradient of the norm's output g), then RMSNorm's backward:
// dn = g * w, dx = rstd (dn - n mean(dn n)), dw += g * n. Each row slot of the block (warp, group)
// accumulates dw in its own shared row of d + 1 floats (the odd stride puts the groups of a warp
// on different banks); the block adds its slots into dw_partial[block].
template <class T, int N>
__global__ void qk_norm_rope_backward_kernel(const T* dy, const T* x, int64_t token_stride, const T* weight,
                                             const T* cos, const T* sin, int64_t positions, const float* rstd,
                                             T* dx, float* dw_partial, int64_t tokens, int64_t heads, int64_t d,
                                             int lanes) {
  extern __shared__ float dw[];  // [qk_rows_per_block, d + 1]
  const int lane = threadIdx.x % 32, slots = qk_rows_per_block(lanes);
  // This group's row within the block's rows: its slot of the shared array.
  const int slot = static_cast<int>(qk_row(qk_warp_first_row(0, threadIdx.x, lanes), threadIdx.x, lanes));
  float* my_dw = dw + static_cast<int64_t>(slot) * (d + 1);
  for (int64_t c = threadIdx.x; c < slots * (d + 1); c += blockDim.x) dw[c] = 0;
  __syncthreads();  // lanes accumulate into columns other lanes zeroed
  const int64_t half = d / 2, rows = tokens * heads;
  const int64_t first = static_cast<int64_t>(lane % lanes) * N, step = static_cast<int64_t>(lanes) * N;
  // The warp's first row decides for all its lanes (the group sums need the whole warp); a lane
  // past the last row runs the iteration without loading or storing.
  const int64_t stride = static_cast<int64_t>(gridDim.x) * slots;
  for (int64_t warp_first = qk_warp_first_row(blockIdx.x, threadIdx.x, lanes); warp_first < rows;
       warp_first += stride) {
    const int64_t row = qk_row(warp_first, threadIdx.x, lanes);
    const bool valid = row < rows;
    const int64_t token = valid ? row / heads : 0, end = valid ? half : 0;
    const T* xr = x + token * token_stride + (valid ? row % heads : 0) * d;
    const T *cr = cos + (token % positions) * half, *sr = sin + (token % positions) * half;
    const float r = valid ? rstd[row] : 0.0f;
    float dot = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const float mean_dot = pass == 0 ? 0.0f : group_sum(dot, lanes) / static_cast<float>(d);
      for (int64_t j = first; j < end; j += step) {
        const Pack<T, N> a = load<T, N>(xr + j), b = load<T, N>(xr + half + j);
        const Pack<T, N> da = load<T, N>(dy + row * d + j), db = load<T, N>(dy + row * d + half + j);
        const Pack<T, N> wa = load<T, N>(weight + j), wb = load<T, N>(weight + half + j);
        const Pack<T, N> c = load<T, N>(cr + j), s = load<T, N>(sr + j);
        Pack<T, N> out1, out2;
#pragma unroll
        for (int k = 0; k < N; ++k) {
          const float cf = to_float(c.v[k]), sf = to_float(s.v[k]);
          const float g1 = to_float(da.v[k]) * cf + to_float(db.v[k]) * sf;
          const float g2 = to_float(db.v[k]) * cf - to_float(da.v[k]) * sf;
          const float n1 = to_float(a.v[k]) * r, n2 = to_float(b.v[k]) * r;
          const float dn1 = g1 * to_float(wa.v[k]), dn2 = g2 * to_float(wb.v[k]);
          if (pass == 0) {
            dot += dn1 * n1 + dn2 * n2;
            my_dw[j + k] += g1 * n1;
            my_dw[half + j + k] += g2 * n2;
          } else {
            out1.v[k] = from_float<T>(r * (dn1 - n1 * mean_dot));
            out2.v[k] = from_float<T>(r * (dn2 - n2 * mean_dot));
          }
        }
        if (pass == 1) {
          store<T, N>(dx + row * d + j, out1);
          store<T, N>(dx + row * d + half + j, out2);
        }
      }
    }
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
    float total = 0;
    for (int w = 0; w < slots; ++w) total += dw[w * (d + 1) + c];
    dw_partial[blockIdx.x * d + c] = total;
  }
}

// Pack width: divides half of d and the token stride (so every row start stays aligned).
int64_t pack_length(int64_t d, int64_t token_stride) { return std::gcd(d / 2, token_stride); }

}  // namespace

cudaError_t qk_norm_rope_forward(Dtype dtype, const void* x, int64_t token_stride, const void* weight,
                                 const void* cos, const void* sin, int64_t positions, void* y, float* rstd,
                                 int64_t tokens, int64_t heads, int64_t d, float eps, cudaStream_t stream) {
  const int64_t rows = tokens * heads;
  if (rows == 0) return cudaSuccess;
  return dispatch(dtype, pack_length(d, token_stride), {x, weight, cos, sin, y}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    const int lanes = lanes_per_row(d / 2 / N), rows_per_block = qk_rows_per_block(lanes);
    const auto grid = static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
    qk_norm_rope_forward_kernel<T, N><<<grid, kQkWarps * 32, 0, stream>>>(
        static_cast<const T*>(x), token_stride, static_cast<const T*>(weight), static_cast<const T*>(cos),
        static_cast<const T*>(sin), positions, static_cast<T*>(y), rstd, tokens, heads, d, eps, lanes);
    return cudaGetLastError();
  });
}

cudaError_t qk_norm_rope_backward(Dtype dtype, const void* dy, const void* x, int64_t token_stride,
                                  const void* weight, const void* cos, const void* sin, int64_t positions,
                                  const float* rstd, void* dx, float* dw_partial, int blocks, int64_t tokens,
                                  int64_t heads, int64_t d, cudaStream_t stream) {
  return dispatch(dtype, pack_length(d, token_stride), {dy, x, weight, cos, sin, dx}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    const int lanes = lanes_per_row(d / 2 / N);
    const size_t shared = static_cast<size_t>(qk_rows_per_block(lanes)) * (d + 1) * sizeof(float);
    if (shared > 48 * 1024) return cudaErrorInvalidValue;
    qk_norm_rope_backward_kernel<T, N><<<blocks, kQkWarps * 32, shared, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), token_stride, static_cast<const T*>(weight),
        static_cast<const T*>(cos), static_cast<const T*>(sin), positions, rstd, static_cast<T*>(dx), dw_partial,
        tokens, heads, d, lanes);
    return cudaGetLastError();
  });
}

}  // namespace spplan::engine::cuda
