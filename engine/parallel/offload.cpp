#include "engine/parallel/offload.hpp"

#include <ATen/ATen.h>

namespace spplan::engine {
namespace {

// Pinned only where there is a GPU to copy to: pinning needs the CUDA runtime.
at::TensorOptions host_options(bool pinned) {
  return at::TensorOptions().dtype(at::kFloat).device(c10::kCPU).pinned_memory(pinned);
}

}  // namespace

at::Tensor host_zeros(int64_t numel, at::ScalarType dtype, MemCategory category, c10::Device device) {
  MemoryScope tag(category);
  HostScope host;
  return at::zeros({numel}, host_options(device.is_cuda()).dtype(dtype));
}

at::Tensor copy_to_host(const at::Tensor& t, MemCategory category, bool async) {
  MemoryScope tag(category);
  HostScope host;
  at::Tensor out = at::empty(t.sizes(), host_options(t.is_cuda()).dtype(t.dtype()));
  out.copy_(t, /*non_blocking=*/async && t.is_cuda());
  return out;
}

at::Tensor copy_to_device(const at::Tensor& host, c10::Device device) {
  at::Tensor out = at::empty(host.sizes(), host.options().device(device).pinned_memory(false));
  out.copy_(host, /*non_blocking=*/device.is_cuda() && host.is_pinned());
  return out;
}

}  // namespace spplan::engine
