// The fused CUDA kernels (engine/model/cuda/) against their ATen reference: each op on a CUDA tensor
// (the kernel) and on a CPU copy (fused_reference.hpp), values and gradients, fp32 and bf16.
// Skipped without the kernels in the build or without a GPU. Tolerances, relative to the largest
// entry: fp32 1e-5 (sums in another order; __expf, 1 / sqrtf); bf16: the kernels round once where
// the reference rounds an intermediate product too (SwiGLU's silu, RoPE's products): 2 u, u = 2^-8.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>

#include "engine/io/data.hpp"
#include "engine/model/fused_kernels.hpp"

namespace spplan::engine {
namespace {

constexpr double kBf16Roundoff = 1.0 / 256;

class FusedCuda : public ::testing::TestWithParam<at::ScalarType> {
 protected:
  void SetUp() override {
    if (!cuda_kernels_built()) GTEST_SKIP() << "built without the fused CUDA kernels";
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no GPU";
    if (std::string(fused_kernels_path(at::Device(at::kCUDA, 0))) != "cuda") GTEST_SKIP() << "SPPLAN_ENGINE_FUSED_KERNELS=aten";
  }
  at::ScalarType dtype() const { return GetParam(); }
  double tol() const { return dtype() == at::kFloat ? 1e-5 : 2 * kBf16Roundoff; }
  // A leaf on the GPU and one on the CPU, holding the same values.
  std::pair<at::Tensor, at::Tensor> leaves(const at::Tensor& cpu) const {
    const at::Tensor t = cpu.to(dtype());
    return {t.to(at::kCUDA).requires_grad_(true), t.clone().requires_grad_(true)};
  }
  void expect_close(const at::Tensor& gpu, const at::Tensor& cpu, const char* what, double factor = 1) const {
    const at::Tensor a = gpu.cpu().to(at::kDouble), b = cpu.to(at::kDouble);
    ASSERT_EQ(a.sizes(), b.sizes()) << what;
    const double diff = (a - b).abs().max().item<double>(), scale = b.abs().max().item<double>();
    EXPECT_LE(diff, factor * tol() * scale + 1e-6) << what << ": max abs diff " << diff << ", largest entry " << scale;
  }
};

TEST_P(FusedCuda, AddRmsNorm) {
  at::manual_seed(21);
  // 16-byte packs (one pass of the block), the one-element path (a part pass), and packs over
  // several passes with a part last one; 1200 rows: the backward's 1024 blocks walk a second row.
  for (const auto& [n, h] : {std::pair<int64_t, int64_t>{300, 1024}, {300, 100}, {600, 4104}}) {
    SCOPED_TRACE("h " + std::to_string(h));
    auto [r, rc] = leaves(at::randn({2, n, h}));
    auto [x, xc] = leaves(at::randn({2, n, h}) * 0.5);
    auto [w, wc] = leaves(1 + 0.1 * at::randn({h}));
    const at::Tensor d_sum = at::randn({2, n, h}).to(dtype()), d_y = at::randn({2, n, h}).to(dtype());
    const auto [sum, y] = fused_add_rms_norm(r, x, w, 1e-6);
    const auto [sum_c, y_c] = fused_add_rms_norm(rc, xc, wc, 1e-6);
    expect_close(sum, sum_c, "sum", 0);
    expect_close(y, y_c, "y");
    const auto g = torch::autograd::grad({sum, y}, {r, x, w}, {d_sum.cuda(), d_y.cuda()});
    const auto gc = torch::autograd::grad({sum_c, y_c}, {rc, xc, wc}, {d_sum, d_y});
    expect_close(g[0], gc[0], "d residual");
    expect_close(g[1], gc[1], "d x");
    expect_close(g[2], gc[2], "d weight");
    // The plain norm takes the same kernel without a residual.
    auto [x2, x2c] = leaves(at::randn({5, h}));
    expect_close(fused_rms_norm(x2, w, 1e-6), fused_rms_norm(x2c, wc, 1e-6), "rms_norm");
  }
}

TEST_P(FusedCuda, QkNormRope) {
  at::manual_seed(22);
  // d 128: a warp on 4 rows in bf16 (2 in fp32); d 64: on 8 (4); d 96: 6 packs a half row, groups
  // of 8 lanes with 2 idle. Rows (tokens x heads) that leave the last block part empty.
  for (const auto& [n, heads, d] : {std::tuple<int64_t, int64_t, int64_t>{300, 8, 128}, {301, 5, 64}, {257, 3, 96}}) {
    SCOPED_TRACE("d " + std::to_string(d) + ", heads " + std::to_string(heads) + ", tokens " + std::to_string(2 * n));
    const int64_t b = 2;
    auto [qkv, qkvc] = leaves(at::randn({b, n, 3 * heads * d}) * 3);
    auto [w, wc] = leaves(1 + 0.1 * at::randn({d}));
    const at::Tensor angles = at::outer(at::arange(n, at::kFloat), at::rand({d / 2}));
    const at::Tensor cos = angles.cos().to(dtype()), sin = angles.sin().to(dtype());
    const at::Tensor dy = at::randn({b, n, heads, d}).to(dtype());
    const at::Tensor k = qkv.narrow(2, heads * d, heads * d).view({b, n, heads, d});
    const at::Tensor kc = qkvc.narrow(2, heads * d, heads * d).view({b, n, heads, d});
    const at::Tensor y = fused_qk_norm_rope(k, w, cos.cuda(), sin.cuda(), 1e-6);
    const at::Tensor yc = fused_qk_norm_rope(kc, wc, cos, sin, 1e-6);
    expect_close(y, yc, "y");
    const auto g = torch::autograd::grad({y}, {qkv, w}, {dy.cuda()});
    const auto gc = torch::autograd::grad({yc}, {qkvc, wc}, {dy});
    expect_close(g[0], gc[0], "d qkv");
    expect_close(g[1], gc[1], "d weight");
  }
}

TEST_P(FusedCuda, SwiGlu) {
  at::manual_seed(23);
  const int64_t ffn = 3072;
  const at::Tensor gu0 = (at::randn({2, 200, 2 * ffn}) * 2).to(dtype()), dc = at::randn({2, 200, ffn}).to(dtype());
  const at::Tensor gu = gu0.cuda().requires_grad_(true), guc = gu0.clone().requires_grad_(true);
  const at::Tensor c = fused_swiglu(gu * 1.0), cc = fused_swiglu(guc * 1.0);
  expect_close(c, cc, "c");
  expect_close(torch::autograd::grad({c}, {gu}, {dc.cuda()})[0], torch::autograd::grad({cc}, {guc}, {dc})[0], "d gate_up");
}

TEST_P(FusedCuda, CrossEntropy) {
  at::manual_seed(24);
  // Qwen3's vocabulary in 16-byte packs, and an odd one (one element at a time); both rows counts
  // cut each row into several column ranges on an H100 (cross_entropy_splits), the labels include
  // the first and last columns (the first and last ranges hold them).
  for (const auto& [rows, vocab] : {std::pair<int64_t, int64_t>{64, 151936}, {37, 32001}}) {
    SCOPED_TRACE("vocab " + std::to_string(vocab));
    const at::Tensor logits = (at::randn({rows, vocab}) * 4).to(dtype());
    at::Tensor labels = at::randint(vocab, {rows}, at::kLong);
    labels.index_fill_(0, at::arange(0, rows, 5, at::kLong), kIgnoreLabel);
    labels[1] = 0;
    labels[2] = vocab - 1;
    at::Tensor g = logits.cuda(), gc = logits.clone();
    at::Tensor loss = at::empty({rows}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    at::Tensor loss_c = at::empty({rows}, at::kFloat);
    cross_entropy_grad(g, labels.cuda(), loss);
    cross_entropy_grad(gc, labels, loss_c);
    expect_close(loss, loss_c, "token losses", 1e-5 / tol());  // fp32 arithmetic on the same logits both ways
    expect_close(g, gc, "gradient");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedCuda, ::testing::Values(at::kFloat, at::kBFloat16),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

}  // namespace
}  // namespace spplan::engine
