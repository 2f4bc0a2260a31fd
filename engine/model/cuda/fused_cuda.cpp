#include "engine/model/cuda/fused_cuda.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "engine/io/data.hpp"
#include "engine/model/cuda/launch.hpp"
#include "engine/model/cuda/launch_shapes.hpp"

namespace spplan::engine::kernels {
namespace {

cuda::Dtype dtype_of(const at::Tensor& t) {
  TORCH_CHECK(t.is_cuda(), "fused CUDA kernels: a CUDA tensor expected, got ", t.device());
  if (t.scalar_type() == at::kBFloat16) return cuda::Dtype::kBFloat16;
  TORCH_CHECK(t.scalar_type() == at::kFloat, "fused CUDA kernels: fp32 or bf16 expected, got ", t.scalar_type());
  return cuda::Dtype::kFloat32;
}

void check(cudaError_t error, const char* what) {
  TORCH_CHECK(error == cudaSuccess, "fused CUDA kernel ", what, ": ", cudaGetErrorString(error));
}

cudaStream_t stream_of(const at::Tensor& t) { return c10::cuda::getCurrentCUDAStream(t.device().index()).stream(); }

// Contiguous, in `like`'s dtype (the weight and the RoPE tables follow the activations).
at::Tensor as_operand(const at::Tensor& t, const at::Tensor& like) {
  return t.to(like.scalar_type()).contiguous();
}

// The backward kernels leave one fp32 row of weight-gradient partial sums per block.
at::Tensor partial_buffer(int blocks, int64_t width, const at::Tensor& like) {
  return at::empty({blocks, width}, like.options().dtype(at::kFloat));
}

}  // namespace

reference::NormForward add_rms_norm_forward(const at::Tensor& residual, const at::Tensor& x_in,
                                            const at::Tensor& weight_in, double eps) {
  const c10::cuda::CUDAGuard guard(x_in.device());
  const at::Tensor x = x_in.contiguous(), weight = as_operand(weight_in, x);
  const at::Tensor r = residual.defined() ? as_operand(residual, x) : at::Tensor();
  const int64_t h = x.size(-1), rows = x.numel() / h;
  reference::NormForward out;
  if (r.defined()) out.sum = at::empty_like(x);
  out.y = at::empty_like(x);
  out.rstd = at::empty({rows, 1}, x.options().dtype(at::kFloat));
  check(cuda::add_rms_norm_forward(dtype_of(x), r.defined() ? r.data_ptr() : nullptr, x.data_ptr(), weight.data_ptr(),
                                   out.sum.defined() ? out.sum.data_ptr() : nullptr, out.y.data_ptr(),
                                   out.rstd.data_ptr<float>(), rows, h, static_cast<float>(eps), stream_of(x)),
        "add_rms_norm_forward");
  return out;
}

reference::NormBackward add_rms_norm_backward(const at::Tensor& dy_in, const at::Tensor& dsum_in,
                                              const at::Tensor& sum_in, const at::Tensor& weight_in,
                                              const at::Tensor& rstd) {
  const c10::cuda::CUDAGuard guard(sum_in.device());
  const at::Tensor sum = sum_in.contiguous(), dy = as_operand(dy_in, sum), weight = as_operand(weight_in, sum);
  const at::Tensor dsum = dsum_in.defined() ? as_operand(dsum_in, sum) : at::Tensor();
  const int64_t h = sum.size(-1), rows = sum.numel() / h;
  if (h > 12288) return reference::add_rms_norm_backward(dy_in, dsum_in, sum_in, weight_in, rstd);  // shared memory
  const int blocks = cuda::weight_grad_blocks(rows);
  at::Tensor dx = at::empty_like(sum), partial = partial_buffer(blocks, h, sum);
  check(cuda::add_rms_norm_backward(dtype_of(sum), dy.data_ptr(), dsum.defined() ? dsum.data_ptr() : nullptr,
                                    sum.data_ptr(), weight.data_ptr(), rstd.contiguous().data_ptr<float>(),
                                    dx.data_ptr(), partial.data_ptr<float>(), blocks, rows, h, stream_of(sum)),
        "add_rms_norm_backward");
  return {dx, partial.sum(0).to(weight_in.scalar_type())};
}

namespace {
// x [b, n, heads, d] as the kernels read it: rows of d contiguous, heads d apart, tokens evenly
// spaced (a narrow of the stacked q/k/v GEMM output is); else a contiguous copy.
at::Tensor token_rows(const at::Tensor& x) {
  const bool readable = x.stride(3) == 1 && x.stride(2) == x.size(3) && x.stride(0) == x.size(1) * x.stride(1);
  return readable ? x : x.contiguous();
}
}  // namespace

reference::QkNormRopeForward qk_norm_rope_forward(const at::Tensor& x_in, const at::Tensor& weight_in,
                                                  const at::Tensor& cos_in, const at::Tensor& sin_in, double eps) {
  const c10::cuda::CUDAGuard guard(x_in.device());
  const at::Tensor x = token_rows(x_in), weight = as_operand(weight_in, x);
  const at::Tensor cos = as_operand(cos_in, x), sin = as_operand(sin_in, x);
  const int64_t tokens = x.size(0) * x.size(1), heads = x.size(2), d = x.size(3);
  reference::QkNormRopeForward out;
  out.y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  out.rstd = at::empty({tokens * heads, 1}, x.options().dtype(at::kFloat));
  check(cuda::qk_norm_rope_forward(dtype_of(x), x.data_ptr(), x.stride(1), weight.data_ptr(), cos.data_ptr(),
                                   sin.data_ptr(), cos.size(0), out.y.data_ptr(), out.rstd.data_ptr<float>(), tokens,
                                   heads, d, static_cast<float>(eps), stream_of(x)),
        "qk_norm_rope_forward");
  return out;
}

reference::NormBackward qk_norm_rope_backward(const at::Tensor& dy_in, const at::Tensor& x_in,
                                              const at::Tensor& weight_in, const at::Tensor& cos_in,
                                              const at::Tensor& sin_in, const at::Tensor& rstd) {
  const c10::cuda::CUDAGuard guard(x_in.device());
  const at::Tensor x = token_rows(x_in), dy = as_operand(dy_in, x), weight = as_operand(weight_in, x);
  const at::Tensor cos = as_operand(cos_in, x), sin = as_operand(sin_in, x);
  const int64_t tokens = x.size(0) * x.size(1), heads = x.size(2), d = x.size(3);
  const int blocks = cuda::weight_grad_blocks(tokens * heads / cuda::kQkWarps);
  at::Tensor dx = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  at::Tensor partial = partial_buffer(blocks, d, x);
  check(cuda::qk_norm_rope_backward(dtype_of(x), dy.data_ptr(), x.data_ptr(), x.stride(1), weight.data_ptr(),
                                    cos.data_ptr(), sin.data_ptr(), cos.size(0), rstd.contiguous().data_ptr<float>(),
                                    dx.data_ptr(), partial.data_ptr<float>(), blocks, tokens, heads, d, stream_of(x)),
        "qk_norm_rope_backward");
  return {dx, partial.sum(0).to(weight_in.scalar_type())};
}

at::Tensor swiglu_forward(const at::Tensor& gate_up_in) {
  const c10::cuda::CUDAGuard guard(gate_up_in.device());
  const at::Tensor gate_up = gate_up_in.contiguous();
  const int64_t ffn = gate_up.size(-1) / 2, rows = gate_up.numel() / (2 * ffn);
  std::vector<int64_t> sizes = gate_up.sizes().vec();
  sizes.back() = ffn;
  at::Tensor out = at::empty(sizes, gate_up.options());
  check(cuda::swiglu_forward(dtype_of(gate_up), gate_up.data_ptr(), out.data_ptr(), rows, ffn, stream_of(gate_up)),
        "swiglu_forward");
  return out;
}

void swiglu_backward_in_place(at::Tensor& gate_up, const at::Tensor& dc_in) {
  TORCH_CHECK(gate_up.is_contiguous(), "swiglu_backward_in_place: gate_up must be contiguous");
  const c10::cuda::CUDAGuard guard(gate_up.device());
  const at::Tensor dc = as_operand(dc_in, gate_up);
  const int64_t ffn = gate_up.size(-1) / 2, rows = gate_up.numel() / (2 * ffn);
  check(cuda::swiglu_backward_in_place(dtype_of(gate_up), gate_up.data_ptr(), dc.data_ptr(), rows, ffn,
                                       stream_of(gate_up)),
        "swiglu_backward_in_place");
}

void cross_entropy_grad_in_place(at::Tensor& logits, const at::Tensor& labels_in, const at::Tensor& token_loss) {
  TORCH_CHECK(logits.is_contiguous() && token_loss.is_contiguous() && token_loss.scalar_type() == at::kFloat,
              "cross_entropy_grad_in_place: contiguous logits and fp32 token losses expected");
  const c10::cuda::CUDAGuard guard(logits.device());
  const at::Tensor labels = labels_in.to(at::kLong).contiguous();
  const int64_t rows = logits.size(0), vocab = logits.size(1);
  const int splits = cuda::cross_entropy_splits(rows, vocab, at::cuda::getCurrentDeviceProperties()->multiProcessorCount);
  at::Tensor partials = at::empty({rows * splits * 2}, logits.options().dtype(at::kFloat));
  check(cuda::cross_entropy_grad_in_place(dtype_of(logits), logits.data_ptr(), labels.data_ptr<int64_t>(),
                                          token_loss.data_ptr<float>(), partials.data_ptr<float>(), splits, rows,
                                          vocab, kIgnoreLabel, stream_of(logits)),
        "cross_entropy_grad_in_place");
}

}  // namespace spplan::engine::kernels
