// SwiGLU forward and its in-place backward: elementwise over [rows, ffn] packs, grid-stride.
#include "engine/model/cuda/common.cuh"

namespace spplan::engine::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float sigmoid(float g) { return 1.0f / (1.0f + __expf(-g)); }

template <class T, int N>
__global__ void swiglu_forward_kernel(const T* gate_up, T* out, int64_t rows, int64_t ffn) {
  const int64_t packs = rows * ffn / N;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = p * N, row = e / ffn, col = e % ffn;
    const Pack<T, N> g = load<T, N>(gate_up + row * 2 * ffn + col), u = load<T, N>(gate_up + row * 2 * ffn + ffn + col);
    Pack<T, N> c;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float gf = to_float(g.v[k]);
      c.v[k] = from_float<T>(gf * sigmoid(gf) * to_float(u.v[k]));
    }
    store<T, N>(out + e, c);
  }
}

// c = silu(g) u: dg = dc u silu'(g), silu'(g) = s (1 + g (1 - s)) with s = sigmoid(g); du = dc silu(g).
template <class T, int N>
__global__ void swiglu_backward_kernel(T* gate_up, const T* dc, int64_t rows, int64_t ffn) {
  const int64_t packs = rows * ffn / N;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = p * N, row = e / ffn, col = e % ffn;
    T* gp = gate_up + row * 2 * ffn + col;
    const Pack<T, N> g = load<T, N>(gp), u = load<T, N>(gp + ffn), d = load<T, N>(dc + e);
    Pack<T, N> dg, du;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float gf = to_float(g.v[k]), s = sigmoid(gf), df = to_float(d.v[k]);
      dg.v[k] = from_float<T>(df * to_float(u.v[k]) * s * (1.0f + gf * (1.0f - s)));
      du.v[k] = from_float<T>(df * gf * s);
    }
    store<T, N>(gp, dg);
    store<T, N>(gp + ffn, du);
  }
}

unsigned grid_for(int64_t packs) {
  const int64_t blocks = (packs + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

cudaError_t swiglu_forward(Dtype dtype, const void* gate_up, void* out, int64_t rows, int64_t ffn, cudaStream_t stream) {
  if (rows * ffn == 0) return cudaSuccess;
  return dispatch(dtype, ffn, {gate_up, out}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    swiglu_forward_kernel<T, N><<<grid_for(rows * ffn / N), kThreads, 0, stream>>>(static_cast<const T*>(gate_up),
                                                                                  static_cast<T*>(out), rows, ffn);
    return cudaGetLastError();
  });
}

cudaError_t swiglu_backward_in_place(Dtype dtype, void* gate_up, const void* dc, int64_t rows, int64_t ffn,
                                     cudaStream_t stream) {
  if (rows * ffn == 0) return cudaSuccess;
  return dispatch(dtype, ffn, {gate_up, dc}, [&](auto type_tag, auto width) {
    using T = decltype(type_tag);
    constexpr int N = decltype(width)::value;
    swiglu_backward_kernel<T, N><<<grid_for(rows * ffn / N), kThreads, 0, stream>>>(static_cast<T*>(gate_up),
                                                                                   static_cast<const T*>(dc), rows, ffn);
    return cudaGetLastError();
  });
}

}  // namespace spplan::engine::cuda
