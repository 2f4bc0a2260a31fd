// A ring's slowest rank, priced alone past 64 ranks (ring.cpp kRanksPricedOneByOne): it is the
// one every rank would give, for zigzag and contiguous shards, causal and windowed.
#include <gtest/gtest.h>

#include <algorithm>

#include "planner/costmodel/compute.hpp"
#include "planner/costmodel/ring.hpp"

namespace spplan::costmodel {
namespace {

// Every rank's pairs, as the loop priced them before (ring.cpp), the slowest kept.
double every_rank_slowest(int64_t cp, bool contiguous, double seq, double window) {
  const auto queries = [&](double a, double b) { return causal_pairs(b, window) - causal_pairs(a, window); };
  const double n = static_cast<double>(cp), shard = seq / n, half = shard / 2.0;
  double slowest = 0;
  for (int64_t r = 0; r < cp; ++r) {
    const double i = static_cast<double>(r);
    slowest = std::max(slowest, contiguous ? queries(i * shard, (i + 1) * shard)
                                           : queries(i * half, (i + 1) * half) +
                                                 queries((2 * n - 1 - i) * half, (2 * n - i) * half));
  }
  return slowest;
}

TEST(RingSlowestRank, TheLastRankIsTheSlowestOfEvery) {
  for (const int64_t cp : {65, 128, 1000, 4096}) {
    for (const bool contiguous : {false, true}) {
      for (const double window : {0.0, 4096.0, 1e6}) {
        PlanSpec p;
        p.knobs.cp = cp;
        p.stack.ring_contiguous_shards = contiguous;
        const double seq = 2.0 * 1024 * 1024 * 1024;
        const double want = every_rank_slowest(cp, contiguous, seq, window);
        EXPECT_NEAR(ring_rank_attention_pairs(p, seq, window), want, 1e-12 * want)
            << "cp " << cp << (contiguous ? " contiguous" : " zigzag") << " window " << window;
      }
    }
  }
}

}  // namespace
}  // namespace spplan::costmodel
