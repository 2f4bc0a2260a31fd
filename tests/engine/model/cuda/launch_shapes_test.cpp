// The fused CUDA kernels' shapes and index maps (engine/model/cuda/launch_shapes.hpp), on the CPU:
// every row and column is visited once, by the threads the kernels' comments say, for the shapes
// the engine's models have and for the awkward ones (part passes, part-empty blocks, idle lanes).
// The kernels' arithmetic is FusedCuda.*'s (GPU only); these run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/model/cuda/launch_shapes.hpp"

namespace spplan::engine::cuda {
namespace {

TEST(CudaLaunchShapes, NormBlocksHaveAThreadPerPackInWholeWarps) {
  EXPECT_EQ(threads_for_packs(1024 / 8, kNormMaxThreads), 128);  // qwen3-0.6b's h in bf16: none idle
  EXPECT_EQ(threads_for_packs(2048 / 8, kNormMaxThreads), 256);
  EXPECT_EQ(threads_for_packs(100, kNormMaxThreads), 128);        // one element a pack: whole warps
  EXPECT_EQ(threads_for_packs(4104 / 8, kNormMaxThreads), 256);   // longer rows: several packs a thread
  EXPECT_EQ(threads_for_packs(1, kNormMaxThreads), 32);
  EXPECT_EQ(threads_for_packs(0, kNormMaxThreads), 32);
}

// Each column has its own slot inside the span, the row loop's shortcut finds it, and the 32
// threads of a warp adding column k of their packs hit 32 different banks.
TEST(CudaLaunchShapes, NormWeightGradientSlotsAreOnePerColumnAndConflictFree) {
  for (const int n : {1, 4, 8}) {
    for (const int64_t h : {int64_t{100}, int64_t{1024}, int64_t{2048}, int64_t{4104}, int64_t{12288}}) {
      if (h % n != 0) continue;  // packs of n only where they divide the row (common.cuh packs_fit)
      SCOPED_TRACE("n " + std::to_string(n) + ", h " + std::to_string(h));
      const int64_t threads = threads_for_packs(h / n, kNormMaxThreads), span = norm_dw_span(h, threads, n);
      EXPECT_LE(span * 4, 48 * 1024) << "the launcher refuses more shared memory";
      std::set<int64_t> slots;
      for (int64_t c = 0; c < h; ++c) {
        const int64_t slot = norm_dw_slot(c, threads, n);
        ASSERT_GE(slot, 0);
        ASSERT_LT(slot, span);
        slots.insert(slot);
      }
      EXPECT_EQ(static_cast<int64_t>(slots.size()), h);
      for (int64_t t = 0; t < threads; ++t) {
        for (int64_t c = t * n; c < h; c += threads * n) {
          ASSERT_EQ(c - t * (n - 1), norm_dw_slot(c, threads, n)) << "the row loop's slot of column " << c;
          for (int k = 1; k < n && c + k < h; ++k) {
            ASSERT_EQ(norm_dw_slot(c + k, threads, n), norm_dw_slot(c, threads, n) + k * threads);
          }
        }
      }
      for (int k = 0; k < n; ++k) {
        std::set<int64_t> banks;
        for (int64_t t = 0; t < 32 && t < threads; ++t) banks.insert(norm_dw_slot(t * n + k, threads, n) % 32);
        EXPECT_EQ(static_cast<int64_t>(banks.size()), std::min<int64_t>(32, threads)) << "k " << k;
      }
    }
  }
}

TEST(CudaLaunchShapes, QkGroupsHaveALanePerPackOfTheHalfRow) {
  EXPECT_EQ(lanes_per_row(128 / 2 / 8), 8);  // d 128 in bf16: 4 rows a warp
  EXPECT_EQ(lanes_per_row(128 / 2 / 4), 16);  // in fp32: 2
  EXPECT_EQ(lanes_per_row(96 / 2 / 8), 8);    // 6 packs: 2 lanes idle
  EXPECT_EQ(lanes_per_row(64 / 2 / 8), 4);
  EXPECT_EQ(lanes_per_row(128 / 2), 32);      // one element a pack: the whole warp, 2 passes
  EXPECT_EQ(lanes_per_row(1), 1);
  EXPECT_EQ(qk_rows_per_block(8), 16);
  EXPECT_EQ(qk_rows_per_block(32), 4);
}

// The forward's grid (a block per qk_rows_per_block rows) gives each row one whole, aligned group
// of lanes; only the last block has lanes past the end.
TEST(CudaLaunchShapes, QkForwardGivesEachRowOneAlignedGroup) {
  for (const int lanes : {1, 4, 8, 16, 32}) {
    for (const int64_t rows : {int64_t{1}, int64_t{15}, int64_t{4800}, int64_t{3010}, int64_t{1542}}) {
      SCOPED_TRACE("lanes " + std::to_string(lanes) + ", rows " + std::to_string(rows));
      const int64_t per_block = qk_rows_per_block(lanes), grid = (rows + per_block - 1) / per_block;
      std::map<int64_t, std::vector<int64_t>> threads_of;  // row -> global thread ids
      for (int64_t block = 0; block < grid; ++block) {
        for (int t = 0; t < kQkWarps * 32; ++t) {
          const int64_t row = qk_row(qk_warp_first_row(block, t, lanes), t, lanes);
          if (row < rows) {
            threads_of[row].push_back(block * kQkWarps * 32 + t);
          } else {
            ASSERT_EQ(block, grid - 1) << "a lane past the end outside the last block";
          }
        }
      }
      ASSERT_EQ(static_cast<int64_t>(threads_of.size()), rows);
      for (const auto& [row, ids] : threads_of) {
        ASSERT_EQ(static_cast<int>(ids.size()), lanes) << "row " << row;
        ASSERT_EQ(ids.front() % lanes, 0) << "row " << row << ": its group is not aligned";
        ASSERT_EQ(ids.back() - ids.front(), lanes - 1) << "row " << row << ": its lanes are not consecutive";
        ASSERT_EQ(ids.front() / 32, ids.back() / 32) << "row " << row << ": its group spans two warps";
      }
    }
  }
}

// The backward's blocks stride over the rows: each row once, the lanes of a warp decide together
// (the same first row), and each group's slot in the block's shared array is its own.
TEST(CudaLaunchShapes, QkBackwardStridesOverEveryRowOnce) {
  for (const int lanes : {4, 8, 16, 32}) {
    for (const int64_t blocks : {int64_t{1}, int64_t{3}, int64_t{7}}) {
      const int64_t rows = 1000, per_block = qk_rows_per_block(lanes);
      SCOPED_TRACE("lanes " + std::to_string(lanes) + ", blocks " + std::to_string(blocks));
      std::map<int64_t, int> visits;
      for (int64_t block = 0; block < blocks; ++block) {
        std::set<int64_t> slots;
        for (int t = 0; t < kQkWarps * 32; ++t) {
          ASSERT_EQ(qk_warp_first_row(block, t, lanes), qk_warp_first_row(block, t - t % 32, lanes));
          const int64_t slot = qk_row(qk_warp_first_row(0, t, lanes), t, lanes);
          ASSERT_GE(slot, 0);
          ASSERT_LT(slot, per_block);
          slots.insert(slot);
          if (t % lanes != 0) continue;  // count each group once
          for (int64_t first = qk_warp_first_row(block, t, lanes); first < rows; first += blocks * per_block) {
            const int64_t row = qk_row(first, t, lanes);
            if (row < rows) ++visits[row];
          }
        }
        ASSERT_EQ(static_cast<int64_t>(slots.size()), per_block);
      }
      ASSERT_EQ(static_cast<int64_t>(visits.size()), rows);
      for (const auto& [row, n] : visits) ASSERT_EQ(n, 1) << "row " << row;
    }
  }
}

TEST(CudaLaunchShapes, CrossEntropySplitsFillTheGpuWithinLimits) {
  const int h100_sms = 132;
  EXPECT_EQ(cross_entropy_splits(128, 151936, h100_sms), 5);  // a 16K-token chunk of qwen3-0.6b: 640 blocks
  EXPECT_EQ(cross_entropy_splits(64, 151936, h100_sms), 9);
  EXPECT_EQ(cross_entropy_splits(37, 32001, h100_sms), 7);     // capped: ranges of at least 4096 columns
  EXPECT_EQ(cross_entropy_splits(4096, 151936, h100_sms), 1);  // enough rows: a block per row
  EXPECT_EQ(cross_entropy_splits(1, 1000000, h100_sms), kCeMaxSplits);
  EXPECT_EQ(cross_entropy_splits(1, 1000, h100_sms), 1);       // a short row is never cut
  EXPECT_EQ(cross_entropy_splits(0, 151936, h100_sms), 1);
}

// The ranges of a row are contiguous, cover it once, and start on a pack.
TEST(CudaLaunchShapes, CrossEntropyRangesPartitionTheRowInPacks) {
  for (const int n : {1, 8}) {
    for (const int64_t vocab : {int64_t{4096}, int64_t{32001}, int64_t{128256}, int64_t{151936}}) {
      if (vocab % n != 0) continue;
      for (int splits = 1; splits <= kCeMaxSplits; ++splits) {
        SCOPED_TRACE("n " + std::to_string(n) + ", vocab " + std::to_string(vocab) + ", splits " +
                     std::to_string(splits));
        int64_t next = 0;
        for (int s = 0; s < splits; ++s) {
          const ColumnRange r = ce_range(s, splits, vocab, n);
          ASSERT_EQ(r.begin, next);
          ASSERT_LE(r.begin, r.end);
          ASSERT_EQ(r.begin % n, 0);
          next = r.end;
        }
        ASSERT_EQ(next, vocab);
      }
    }
  }
}

}  // namespace
}  // namespace spplan::engine::cuda
