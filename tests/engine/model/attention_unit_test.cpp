// engine/model/attention.hpp's grouped-query paths. CUDA's fp32 kernel takes no enable_gqa, so there the
// engine expands K and V to the query heads; on a CPU both paths run, and must agree.
#include "engine/model/attention.hpp"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

namespace spplan::engine {
namespace {

TEST(GqaPath, NativeWhenBlockwiseElseExpandedElseRefused) {
  // sdp::SDPBackend: 0 math, 1 flash, 2 memory-efficient, 3 cuDNN, -1 none.
  EXPECT_EQ(choose_gqa_path(1, 0), GqaPath::kNative);      // CPU flash takes enable_gqa
  EXPECT_EQ(choose_gqa_path(3, 0), GqaPath::kNative);      // bf16 on CUDA: cuDNN
  EXPECT_EQ(choose_gqa_path(0, 2), GqaPath::kExpandKv);    // fp32 on CUDA: math with GQA, mem-efficient without
  EXPECT_EQ(choose_gqa_path(0, 0), GqaPath::kRefuse);      // never the s x s scores
  EXPECT_EQ(choose_gqa_path(-1, -1), GqaPath::kRefuse);
}

// Query head j reads KV head j / (h / h_kv): the expanded call equals the native GQA call, output
// and gradients (fp32, same kernel family: within 1e-5).
TEST(GqaPath, ExpandedKvEqualsNativeGqa) {
  at::manual_seed(3);
  const int64_t b = 1, s = 96, h = 8, hkv = 2, d = 16;
  const at::Tensor q = at::randn({b, s, h, d}).requires_grad_(true);
  const at::Tensor k = at::randn({b, s, hkv, d}).requires_grad_(true);
  const at::Tensor v = at::randn({b, s, hkv, d}).requires_grad_(true);
  const at::Tensor w = at::randn({b, s, h, d});  // a loss that weighs every output differently

  const at::Tensor native = causal_attention(q, k, v);
  const auto g_native = torch::autograd::grad({(native * w).sum()}, {q, k, v});
  const at::Tensor expanded = causal_attention(q, expand_kv_heads(k, h), expand_kv_heads(v, h));
  const auto g_expanded = torch::autograd::grad({(expanded * w).sum()}, {q, k, v});

  EXPECT_EQ(expand_kv_heads(k, h).sizes(), (at::IntArrayRef{b, s, h, d}));
  EXPECT_TRUE(at::allclose(native, expanded, 1e-5, 1e-5));
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(at::allclose(g_native[i], g_expanded[i], 1e-5, 1e-5)) << "input " << i;
  // The mapping matters: tiling the KV heads instead (j reads j % h_kv) gives another result.
  const at::Tensor tiled = causal_attention(q, k.repeat({1, 1, h / hkv, 1}), v.repeat({1, 1, h / hkv, 1}));
  EXPECT_FALSE(at::allclose(native, tiled, 1e-3, 1e-3));
}

// The start-up choice of the SDPA kernel with an injected timer (what CUDA would measure): the
// fastest that runs, never one that cannot, LibTorch's own choice when neither runs.
TEST(SdpaBackend, FastestThatRunsIsChosen) {
  using B = SdpaBackend;
  const std::vector<B> both{B::kCudnn, B::kFlash};
  auto timer = [](std::optional<double> cudnn, std::optional<double> flash) {
    return [=](B b) { return b == B::kCudnn ? cudnn : flash; };
  };
  EXPECT_EQ(choose_sdpa_backend(both, timer(1.7e-3, 3.4e-3)), B::kCudnn);  // H100 bf16 at 16K (kernels.jsonl)
  EXPECT_EQ(choose_sdpa_backend(both, timer(3.4e-3, 1.7e-3)), B::kFlash);
  EXPECT_EQ(choose_sdpa_backend(both, timer(std::nullopt, 9.0)), B::kFlash);  // cuDNN refuses the shapes
  EXPECT_EQ(choose_sdpa_backend(both, timer(std::nullopt, std::nullopt)), B::kLibTorch);
  EXPECT_EQ(choose_sdpa_backend(both, timer(2.0, 2.0)), B::kCudnn);  // a tie keeps the first
  EXPECT_EQ(choose_sdpa_backend({}, timer(1.0, 1.0)), B::kLibTorch);
}

TEST(SdpaBackend, EachCandidateIsTimedOnce) {
  std::vector<SdpaBackend> timed;
  choose_sdpa_backend({SdpaBackend::kCudnn, SdpaBackend::kFlash}, [&](SdpaBackend b) -> std::optional<double> {
    timed.push_back(b);
    return 1.0;
  });
  EXPECT_EQ(timed, (std::vector<SdpaBackend>{SdpaBackend::kCudnn, SdpaBackend::kFlash}));
}

// On a CPU nothing is measured: LibTorch's CPU flash kernel, every backend left enabled.
TEST(SdpaBackend, CpuKeepsLibTorchsKernel) {
  const SdpaChoice c = select_sdpa_backend({1, 64, 4, 2, 16, at::kFloat}, at::Device(at::kCPU));
  EXPECT_EQ(c.backend, SdpaBackend::kLibTorch);
  EXPECT_EQ(c.how, "cpu");
  EXPECT_EQ(to_string(c.backend), "libtorch");
  EXPECT_EQ(to_string(SdpaBackend::kCudnn), "cudnn");
  EXPECT_EQ(to_string(SdpaBackend::kFlash), "flash");
  // A plan's named kernel changes nothing on a CPU, whose one kernel the costmodel prices there.
  EXPECT_EQ(select_sdpa_backend({1, 64, 4, 2, 16, at::kFloat}, at::Device(at::kCPU), SdpaBackend::kFlash).how, "cpu");
}

// A plan that names FlashAttention 2 runs LibTorch's flash kernels, the kernel it was priced at; an
// sdpa plan, or a kernel the record settled, leaves the choice to the measurement.
TEST(SdpaBackend, APlanNamingFlash2RunsTheFlashKernels) {
  EXPECT_EQ(named_sdpa_backend(AttentionKernel::kFlash2, true), SdpaBackend::kFlash);
  EXPECT_EQ(named_sdpa_backend(AttentionKernel::kFlash2, false), std::nullopt);
  EXPECT_EQ(named_sdpa_backend(AttentionKernel::kSdpa, true), std::nullopt);
}

}  // namespace
}  // namespace spplan::engine
