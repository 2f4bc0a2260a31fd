// Block and grid shapes of the fused CUDA kernels and the index maps their threads follow, in plain
// C++ (host and device): the CPU tests (tests/engine/model/cuda/launch_shapes_test.cpp) check that
// every row and column is visited once, where no GPU can run the kernels themselves.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__CUDACC__)
#define SPPLAN_HOST_DEVICE __host__ __device__
#else
#define SPPLAN_HOST_DEVICE
#endif

namespace spplan::engine::cuda {

// ---- RMSNorm (rms_norm.cu): a block per row, one thread per pack ----

constexpr int kNormMaxThreads = 256;

// Threads for a block that walks a row of `packs` packs: one pack each where the row allows (a
// 1024-wide bf16 row is 128 packs: 128 threads, not 256 with half of them idle), in whole warps,
// at most `cap` (longer rows take several packs a thread).
inline int threads_for_packs(int64_t packs, int cap) {
  const int64_t warps = std::max<int64_t>(1, (packs + 31) / 32);
  return static_cast<int>(std::min<int64_t>(warps * 32, cap));
}

// The backward's shared weight-gradient array. Thread t owns the columns t N .. t N + N - 1 of
// each pass of threads * N columns; within a pass they are stored k-major, (k, t), so the threads
// of a warp add into consecutive words. Stored by column, threads t and t + 32 / N shared a bank:
// 8-way conflicts at N = 8, on every row. Its length: h rounded up to whole passes.
SPPLAN_HOST_DEVICE inline int64_t norm_dw_span(int64_t h, int64_t threads, int n) {
  const int64_t pass_width = threads * n;
  return (h + pass_width - 1) / pass_width * pass_width;
}
// Where column c lives. For a thread's pack start c = pass * threads * N + t * N this is
// c - t (N - 1), which the row loop uses without a division; column c + k is k * threads further.
SPPLAN_HOST_DEVICE inline int64_t norm_dw_slot(int64_t c, int64_t threads, int n) {
  const int64_t in_pass = c % (threads * n);
  return c - in_pass + (in_pass % n) * threads + in_pass / n;
}

// ---- q/k norm + RoPE (qk_norm_rope.cu): a group of lanes per (token, head) row ----

constexpr int kQkWarps = 4;  // warps per block

// Lanes per row: the half row's packs, rounded up to a power of two, at most 32.
inline int lanes_per_row(int64_t half_packs) {
  int lanes = 1;
  while (lanes < 32 && lanes < half_packs) lanes *= 2;
  return lanes;
}
// Rows a block works on at once: each warp takes 32 / lanes.
SPPLAN_HOST_DEVICE inline int qk_rows_per_block(int lanes) { return kQkWarps * (32 / lanes); }
// The first row of the rows a thread's warp works on at once, in block `block` (the forward's
// grid has a block per qk_rows_per_block rows; the backward's blocks stride by that many).
SPPLAN_HOST_DEVICE inline int64_t qk_warp_first_row(int64_t block, int thread, int lanes) {
  return block * qk_rows_per_block(lanes) + static_cast<int64_t>(thread / 32) * (32 / lanes);
}
// That thread's row: its group's place in the warp.
SPPLAN_HOST_DEVICE inline int64_t qk_row(int64_t warp_first_row, int thread, int lanes) {
  return warp_first_row + (thread % 32) / lanes;
}

// ---- cross-entropy (cross_entropy.cu): a block per (row, column range) ----

constexpr int kCeThreads = 512;
constexpr int kCeBlocksPerSm = 4;                 // blocks the launches aim at per SM
constexpr int64_t kCeMinRange = kCeThreads * 8;   // a range keeps at least a pass of bf16 packs
constexpr int kCeMaxSplits = 64;

// Column ranges each row is cut into, so that rows x splits blocks fill a GPU of `sms` SMs
// kCeBlocksPerSm times over.
inline int cross_entropy_splits(int64_t rows, int64_t vocab, int sms) {
  if (rows <= 0) return 1;
  const int64_t wanted = (static_cast<int64_t>(kCeBlocksPerSm) * sms + rows - 1) / rows;
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>(kCeMaxSplits, vocab / kCeMinRange));
  return static_cast<int>(std::clamp<int64_t>(wanted, 1, most));
}

// The column range [begin, end) of block `split` of a row: equal ranges in whole packs of n (the
// last ones shorter or empty).
struct ColumnRange {
  int64_t begin, end;
};
SPPLAN_HOST_DEVICE inline ColumnRange ce_range(int split, int splits, int64_t vocab, int n) {
  const int64_t width = ((vocab + splits - 1) / splits + n - 1) / n * n;
  const int64_t begin = split * width;
  return {begin < vocab ? begin : vocab, begin + width < vocab ? begin + width : vocab};
}

}  // namespace spplan::engine::cuda
