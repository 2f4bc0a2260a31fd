// The engine's dtypes, from the plan's knobs, by DeepSpeed's rules (MEMORY-FACTS 1.3).
#pragma once

#include <cstdint>

#include <c10/core/ScalarType.h>

#include "planner/config/knobs.hpp"

namespace spplan::engine {

// Parameters, activations and gradients (grad_accum_dtype defaults to the model dtype).
inline at::ScalarType model_dtype(const Knobs& k) {
  return k.precision == Precision::kBf16 ? at::kBFloat16 : at::kFloat;
}

// Gradient reductions: seq_parallel_communication_data_type under SP (sp > 1), else
// communication_data_type, whose default is the model dtype.
inline at::ScalarType reduce_dtype(const Knobs& k, int64_t sp) {
  if (sp > 1) return k.sp_comm_dtype == CommDtype::kBf16 ? at::kBFloat16 : at::kFloat;
  return model_dtype(k);
}

}  // namespace spplan::engine
