#include "engine/device/alloc_conf.hpp"

#include <cstdlib>

namespace spplan::engine {
namespace {

constexpr const char* kCudaVar = "PYTORCH_CUDA_ALLOC_CONF";
constexpr const char* kGenericVar = "PYTORCH_ALLOC_CONF";
constexpr const char* kMarkerVar = "SPPLAN_ENGINE_SET_ALLOC_CONF";

}  // namespace

AllocConf choose_alloc_conf(const char* cuda_var, const char* generic_var, const char* engine_marker) {
  // LibTorch's order: the CUDA-specific variable wins over the generic one.
  if (cuda_var != nullptr) return {kCudaVar, cuda_var, engine_marker != nullptr};
  if (generic_var != nullptr) return {kGenericVar, generic_var, false};
  return {"", "", false};
}

AllocConf apply_alloc_conf() {
  AllocConf c = choose_alloc_conf(std::getenv(kCudaVar), std::getenv(kGenericVar), std::getenv(kMarkerVar));
  if (!c.variable.empty()) return c;
  ::setenv(kCudaVar, kEngineAllocConf, 1);
  ::setenv(kMarkerVar, "1", 1);
  return {kCudaVar, kEngineAllocConf, true};
}

}  // namespace spplan::engine
