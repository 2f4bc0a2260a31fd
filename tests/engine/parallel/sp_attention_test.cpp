// Ulysses all-to-all and SP attention against single-process attention (sp_attention_worker.cpp).
#include <gtest/gtest.h>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

void check_worker(int nproc) {
  const RunResult r = run(SPPLAN_SP_WORKER_BIN, {"--nproc", std::to_string(nproc)}, {}, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("FAIL"), std::string::npos) << r.err;
}

TEST(UlyssesAttention, OneRankIsPlainAttention) { check_worker(1); }
TEST(UlyssesAttention, TwoRanksRoundTripExactAndMatchSingleProcess) { check_worker(2); }
TEST(UlyssesAttention, FourRanksRoundTripExactAndMatchSingleProcess) { check_worker(4); }

}  // namespace
}  // namespace spplan::engine::testing
