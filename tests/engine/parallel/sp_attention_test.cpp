// Ulysses all-to-all, SP attention and ring attention against single-process attention
// (sp_attention_worker.cpp).
#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

void check_worker(int nproc, int cp = 1) {
  std::vector<std::string> args{"--nproc", std::to_string(nproc)};
  if (cp > 1) args.insert(args.end(), {"--cp", std::to_string(cp)});
  const RunResult r = run(SPPLAN_SP_WORKER_BIN, args, {}, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("FAIL"), std::string::npos) << r.err;
}

TEST(UlyssesAttention, OneRankIsPlainAttention) { check_worker(1); }
TEST(UlyssesAttention, TwoRanksRoundTripExactAndMatchSingleProcess) { check_worker(2); }
TEST(UlyssesAttention, FourRanksRoundTripExactAndMatchSingleProcess) { check_worker(4); }

// Ring attention (parallel/ring_attention.hpp) on its zigzag rows: output, dq, dk, dv equal
// single-process attention, grouped-query K/V included (h 4 over h_kv 2 with sp 1).
TEST(RingAttention, TwoRingRanksMatchSingleProcess) { check_worker(2, 2); }
TEST(RingAttention, FourRingRanksMatchSingleProcess) { check_worker(4, 4); }
TEST(RingAttention, UlyssesTwoByRingTwoMatchSingleProcess) { check_worker(4, 2); }

}  // namespace
}  // namespace spplan::engine::testing
