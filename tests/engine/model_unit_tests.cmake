# Unit tests of the tiled loss, tiled MLP, fused kernels and attention paths (engine/model/) and of
# the host AdamW (engine/run/train_optimizer.cpp) against plain ATen: they call the autograd functions
# directly, so they link LibTorch. On a GPU, FusedCuda.* checks the CUDA kernels against the ATen
# references; CudaLaunchShapes.* checks their shapes and index maps on any machine. Included by tests/engine/CMakeLists.txt and, without the rest of the tests, by the
# engine-only build of a GPU node (the root CMakeLists.txt), which runs the binary itself.
add_executable(engine_tiling_unit_tests
  ${CMAKE_CURRENT_LIST_DIR}/model/tiling_unit_test.cpp ${CMAKE_CURRENT_LIST_DIR}/model/attention_unit_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model/window_attention_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model/fused_kernels_test.cpp ${CMAKE_CURRENT_LIST_DIR}/model/fused_cuda_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model/cuda/launch_shapes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/host_adamw_test.cpp ${CMAKE_CURRENT_LIST_DIR}/parallel/ring_attention_unit_test.cpp)
target_link_libraries(engine_tiling_unit_tests PRIVATE spplan_engine_model GTest::gtest_main)
# The engine's precompiled ATen header: each of these sources took 50-90 s to compile without it.
target_precompile_headers(engine_tiling_unit_tests REUSE_FROM spplan_engine_device)
