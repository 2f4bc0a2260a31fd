// The host AdamW (train_optimizer.cpp: LibTorch's fused CPU kernel on the flat fp32 master) already runs over
// every intra-op thread (at::parallel_for over cache-line-aligned slices of each tensor); the
// engine gives a rank cores / local ranks threads. Splitting the work across threads must not
// change a bit of the result: every element's update is independent of the others.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

namespace spplan::engine {
namespace {

struct AdamState {
  at::Tensor param, grad, m, v;
};

AdamState random_state(int64_t n) {
  at::manual_seed(31);
  return {at::randn({n}), at::randn({n}) * 1e-2, at::randn({n}) * 1e-3, at::rand({n}) * 1e-5};
}

// Two AdamW steps on units of odd sizes (the ZeRO layout's views), with `threads` intra-op threads.
AdamState step_with_threads(int threads, const AdamState& start, const std::vector<int64_t>& units) {
  const int before = at::get_num_threads();
  at::set_num_threads(threads);
  AdamState s{start.param.clone(), start.grad.clone(), start.m.clone(), start.v.clone()};
  for (int step = 1; step <= 2; ++step) {
    std::vector<at::Tensor> p, g, m, v, steps;
    int64_t at = 0;
    const at::Tensor step_t = at::full({}, static_cast<double>(step));
    for (int64_t n : units) {
      p.push_back(s.param.narrow(0, at, n));
      g.push_back(s.grad.narrow(0, at, n));
      m.push_back(s.m.narrow(0, at, n));
      v.push_back(s.v.narrow(0, at, n));
      steps.push_back(step_t);
      at += n;
    }
    at::_fused_adamw_(p, g, m, v, {}, steps, 1e-3, 0.9, 0.95, 0.1, 1e-8, false, false);
  }
  at::set_num_threads(before);
  return s;
}

TEST(HostAdamW, AllThreadsGiveTheSerialResultBitForBit) {
  const std::vector<int64_t> units{1'000'003, 77, 524'288, 4'099};
  int64_t total = 0;
  for (int64_t n : units) total += n;
  const AdamState start = random_state(total);
  const AdamState serial = step_with_threads(1, start, units);
  for (int threads : {2, 3, std::max(2, static_cast<int>(at::get_num_threads()))}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const AdamState parallel = step_with_threads(threads, start, units);
    EXPECT_TRUE(at::equal(parallel.param, serial.param));
    EXPECT_TRUE(at::equal(parallel.m, serial.m));
    EXPECT_TRUE(at::equal(parallel.v, serial.v));
  }
  EXPECT_FALSE(at::equal(serial.param, start.param));  // it stepped
}

}  // namespace
}  // namespace spplan::engine
