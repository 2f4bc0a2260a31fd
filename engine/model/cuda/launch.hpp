// Launchers of the engine's fused CUDA kernels (engine/model/cuda/*.cu). This header and the .cu files
// know nothing of LibTorch: raw pointers, sizes and a stream, so nvcc compiles them in seconds.
// fused_cuda.cpp is the LibTorch side (tensors, the current stream, the checks).
//
// Every kernel reads and writes its tensors once from HBM (a second read of a row hits L2), loads
// 16 bytes per thread where the row length allows it (8 bf16 or 4 fp32), computes in fp32 and
// rounds once on the store. The maths of each is the CPU reference's (fused_reference.hpp).
// Rows are contiguous unless a stride is given. Each launcher returns the launch's error.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace spplan::engine::cuda {

enum class Dtype { kFloat32, kBFloat16 };

// Blocks of the backward kernels that reduce a weight gradient over rows: each writes one fp32
// row of partial sums ([blocks, width]) that the caller adds up.
int weight_grad_blocks(int64_t rows);

// sum = residual + x (rounded to the dtype; not written when residual is null: x is the sum),
// y = weight * round(sum * rstd), rstd = 1 / sqrt(mean(sum^2) + eps) in fp32. [rows, h].
cudaError_t add_rms_norm_forward(Dtype dtype, const void* residual, const void* x, const void* weight,
                                 void* sum, void* y, float* rstd, int64_t rows, int64_t h, float eps,
                                 cudaStream_t stream);
// With n = sum * rstd and dn = dy * weight: dx = rstd (dn - n mean(dn n)) + dsum_in (dsum_in may be
// null), the gradient of both residual and x; dw_partial [blocks, h] += over its rows dy * n.
// h * 4 bytes must fit in 48 KiB of shared memory (h <= 12288).
cudaError_t add_rms_norm_backward(Dtype dtype, const void* dy, const void* dsum_in, const void* sum,
                                  const void* weight, const float* rstd, void* dx, float* dw_partial, int blocks,
                                  int64_t rows, int64_t h, cudaStream_t stream);

// Per-head RMSNorm then rotate-half RoPE. x: [tokens, heads, d] with token stride token_stride
// (a view of the stacked q/k/v GEMM output), head stride d; y: contiguous [tokens, heads, d];
// rstd: [tokens * heads]; cos, sin: [positions, d / 2] in the dtype, token t at position t % positions.
cudaError_t qk_norm_rope_forward(Dtype dtype, const void* x, int64_t token_stride, const void* weight,
                                 const void* cos, const void* sin, int64_t positions, void* y, float* rstd,
                                 int64_t tokens, int64_t heads, int64_t d, float eps, cudaStream_t stream);
// dy, dx: contiguous [tokens, heads, d]; dw_partial [blocks, d].
cudaError_t qk_norm_rope_backward(Dtype dtype, const void* dy, const void* x, int64_t token_stride,
                                  const void* weight, const void* cos, const void* sin, int64_t positions,
                                  const float* rstd, void* dx, float* dw_partial, int blocks, int64_t tokens,
                                  int64_t heads, int64_t d, cudaStream_t stream);

// out [rows, ffn] = silu(gate) * up for gate_up [rows, 2 ffn] = [gate | up].
cudaError_t swiglu_forward(Dtype dtype, const void* gate_up, void* out, int64_t rows, int64_t ffn,
                           cudaStream_t stream);
// Overwrites gate_up with [d gate | d up] for the output gradient dc [rows, ffn].
cudaError_t swiglu_backward_in_place(Dtype dtype, void* gate_up, const void* dc, int64_t rows, int64_t ffn,
                                     cudaStream_t stream);

// logits [rows, vocab] becomes d(sum of token losses)/d(logits) = softmax - one_hot(label), zero on
// rows labelled ignore_index; token_loss [rows] = logsumexp - target logit (0 when ignored).
// splits: column ranges a row is cut into (cross_entropy_splits, launch_shapes.hpp); partials:
// fp32 scratch of rows * splits * 2 (each range's max and sum of exponentials).
cudaError_t cross_entropy_grad_in_place(Dtype dtype, void* logits, const int64_t* labels, float* token_loss,
                                        float* partials, int splits, int64_t rows, int64_t vocab,
                                        int64_t ignore_index, cudaStream_t stream);

}  // namespace spplan::engine::cuda
