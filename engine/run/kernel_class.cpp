// kernel_class_of (kernel_clock.hpp): no LibTorch, so engine_tests checks it in-process.
#include <array>

#include "engine/run/kernel_clock.hpp"

namespace spplan::engine {
namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The dense matrix products ATen runs a linear layer and a batched product with.
constexpr std::array<std::string_view, 8> kGemmOps = {"aten::mm",    "aten::addmm",  "aten::bmm",    "aten::baddbmm",
                                                       "aten::addbmm", "aten::matmul", "aten::linear", "aten::_addmm_activation"};

}  // namespace

const char* kernel_class_of(std::string_view op, MemCategory region) {
  // First: collectives may be recorded on the backend's own threads, where the training thread's
  // memory tag says nothing about them.
  if (op.rfind("c10d::", 0) == 0 || op.rfind("gloo:", 0) == 0 || op.rfind("nccl:", 0) == 0) return "comm";
  if (region == MemCategory::kLogits) return "loss";
  if (region == MemCategory::kOptimizer) return "optimizer";
  // SDPA and the kernels it dispatches to (flash, memory-efficient, cuDNN; CPU flash "_for_cpu").
  if (contains(op, "scaled_dot_product") || contains(op, "flash_attention") || contains(op, "efficient_attention") ||
      contains(op, "cudnn_attention")) {
    return contains(op, "backward") ? "attention_bwd" : "attention_fwd";
  }
  for (std::string_view g : kGemmOps) {
    if (op == g) return "gemm";
  }
  return "elementwise";
}

}  // namespace spplan::engine
