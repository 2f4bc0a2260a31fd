# The engine's fused CUDA kernels (engine/model/cuda/*.cu, model/fused_kernels.hpp). SPPLAN_ENGINE_CUDA_KERNELS:
#   AUTO (default): built when CMake finds a CUDA compiler and LibTorch has CUDA compiled in;
#   ON: the same, and configuring fails (saying which is missing) when either is absent;
#   OFF: never (the ops run their ATen reference on every device).
# The .cu files include no LibTorch header (launch.hpp: raw pointers, sizes, a stream), so nvcc
# compiles them alone; fused_cuda.cpp is the LibTorch side, compiled with the engine. They are
# compiled for SPPLAN_ENGINE_CUDA_ARCHITECTURES, default 90 (H100, the GPU the engine is measured
# on): pass -DSPPLAN_ENGINE_CUDA_ARCHITECTURES="80;90" for A100s too. Sets SPPLAN_ENGINE_CUDA_KERNELS_BUILT.
set(SPPLAN_ENGINE_CUDA_KERNELS AUTO CACHE STRING "Build the engine's fused CUDA kernels: AUTO, ON or OFF")
set_property(CACHE SPPLAN_ENGINE_CUDA_KERNELS PROPERTY STRINGS AUTO ON OFF)
if(NOT SPPLAN_ENGINE_CUDA_KERNELS MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SPPLAN_ENGINE_CUDA_KERNELS: value \"${SPPLAN_ENGINE_CUDA_KERNELS}\" is not allowed (allowed: AUTO, ON, OFF)")
endif()

set(SPPLAN_ENGINE_CUDA_KERNELS_BUILT OFF)
set(_spplan_cuda_missing "")
if(NOT SPPLAN_ENGINE_CUDA_KERNELS STREQUAL "OFF")
  # LibTorch's config found the toolkit (FindCUDAToolkit); its nvcc need not be on PATH.
  if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}" CACHE FILEPATH "CUDA compiler")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    list(APPEND _spplan_cuda_missing "no CUDA compiler found (set CMAKE_CUDA_COMPILER)")
  endif()
  if(NOT SPPLAN_TORCH_HAS_CUDA)
    list(APPEND _spplan_cuda_missing "LibTorch has no CUDA")
  endif()
  if(_spplan_cuda_missing STREQUAL "")
    set(SPPLAN_ENGINE_CUDA_KERNELS_BUILT ON)
  elseif(SPPLAN_ENGINE_CUDA_KERNELS STREQUAL "ON")
    message(FATAL_ERROR "SPPLAN_ENGINE_CUDA_KERNELS=ON: ${_spplan_cuda_missing}")
  endif()
endif()

if(SPPLAN_ENGINE_CUDA_KERNELS_BUILT)
  # Their own setting: LibTorch's config enables CUDA first, which fills CMAKE_CUDA_ARCHITECTURES
  # with nvcc's default (75) before this file could choose.
  set(SPPLAN_ENGINE_CUDA_ARCHITECTURES 90 CACHE STRING "GPU architectures of the engine's fused CUDA kernels")
  enable_language(CUDA)
  # LibTorch's cuda.cmake filled CMAKE_CUDA_FLAGS for its own extensions (its arch list, extended
  # lambdas, an ONNX define); these kernels need none of it: the architectures come from
  # SPPLAN_ENGINE_CUDA_ARCHITECTURES.
  set(CMAKE_CUDA_FLAGS "")
  add_library(spplan_engine_cuda STATIC
    ${CMAKE_CURRENT_LIST_DIR}/../model/cuda/rms_norm.cu ${CMAKE_CURRENT_LIST_DIR}/../model/cuda/qk_norm_rope.cu
    ${CMAKE_CURRENT_LIST_DIR}/../model/cuda/swiglu.cu ${CMAKE_CURRENT_LIST_DIR}/../model/cuda/cross_entropy.cu)
  target_include_directories(spplan_engine_cuda PRIVATE ${PROJECT_SOURCE_DIR})
  # The runtime is the one LibTorch loads (torch::cudart: the wheel's libcudart, linked with the
  # engine through spplan::torch), not a second copy.
  # C++17: CMake 3.25 knows no C++20 flag for nvcc (LibTorch's cuda.cmake would copy CMAKE_CXX_STANDARD).
  set_target_properties(spplan_engine_cuda PROPERTIES CUDA_ARCHITECTURES "${SPPLAN_ENGINE_CUDA_ARCHITECTURES}"
                        CUDA_STANDARD 17 CUDA_RUNTIME_LIBRARY None
                        POSITION_INDEPENDENT_CODE ON)
  # The project's -Wall -Wextra -Wpedantic are host-compiler flags: nvcc's generated host code
  # breaks -Wpedantic (tens of thousands of "line directive" warnings), so the host compiler gets the first two.
  set_property(TARGET spplan_engine_cuda PROPERTY COMPILE_OPTIONS "-Xcompiler=-Wall,-Wextra")
endif()
message(STATUS "spplan engine: fused CUDA kernels ${SPPLAN_ENGINE_CUDA_KERNELS_BUILT} "
               "(SPPLAN_ENGINE_CUDA_KERNELS=${SPPLAN_ENGINE_CUDA_KERNELS}${_spplan_cuda_missing})")
