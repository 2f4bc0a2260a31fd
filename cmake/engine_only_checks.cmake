# What the engine-only build of a GPU node checks besides `spplan run` (first, on a lent GPU): the engine's
# LibTorch unit tests, whose FusedCuda.* cases test the fused CUDA kernels against their ATen
# references, and bench_fused_kernels (their bandwidth against HBM's). The node has no GoogleTest
# package: scripts/bundle-headers.sh copies Debian's googletest sources into SPPLAN_BUNDLE_DIR,
# built here with the project's compiler. Without either, only the bench is built (and says why).
find_package(GTest QUIET)
if(NOT GTest_FOUND AND EXISTS "${SPPLAN_BUNDLE_DIR}/googletest/CMakeLists.txt")
  set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory("${SPPLAN_BUNDLE_DIR}/googletest" "${PROJECT_BINARY_DIR}/googletest" EXCLUDE_FROM_ALL)
endif()
if(TARGET GTest::gtest_main)
  include(${PROJECT_SOURCE_DIR}/tests/engine/model_unit_tests.cmake)
  message(STATUS "spplan engine-only: engine_tiling_unit_tests built (FusedCuda.* on a GPU)")
else()
  message(STATUS "spplan engine-only: no GoogleTest (system or ${SPPLAN_BUNDLE_DIR}/googletest): "
                 "engine_tiling_unit_tests not built")
endif()
add_subdirectory(${PROJECT_SOURCE_DIR}/bench/engine ${PROJECT_BINARY_DIR}/bench/engine)
