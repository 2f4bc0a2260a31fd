// Token sources, sharding and the global batch layout (engine/io/data.hpp).
#include "engine/io/data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

TEST(EngineData, ShardShiftsLabelsBeforeShardingAndPadsWithIgnoredLabels) {
  const std::vector<int64_t> window{10, 11, 12, 13, 14, 15};  // seq 5 + 1
  // sp 2: 5 tokens padded to 6, 3 per rank.
  const Shard r0 = shard_of(window, 2, 0), r1 = shard_of(window, 2, 1);
  EXPECT_EQ(r0.inputs, (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(r0.labels, (std::vector<int64_t>{11, 12, 13}));
  EXPECT_EQ(r0.first_position, 0);
  EXPECT_EQ(r1.inputs, (std::vector<int64_t>{13, 14, 0}));
  EXPECT_EQ(r1.labels, (std::vector<int64_t>{14, 15, kIgnoreLabel}));
  EXPECT_EQ(r1.first_position, 3);
}

TEST(EngineData, ZigzagGivesCpRankCChunksCAnd2cpMinus1MinusCSplitOverSp) {
  // seq 16, cp 2: chunks of 4; CP rank 0 holds chunks 0 and 3, CP rank 1 chunks 1 and 2.
  EXPECT_EQ(zigzag_positions(16, 1, 0, 2, 0), (std::vector<int64_t>{0, 1, 2, 3, 12, 13, 14, 15}));
  EXPECT_EQ(zigzag_positions(16, 1, 0, 2, 1), (std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10, 11}));
  // sp 2 x cp 2: each CP rank's 8 tokens split contiguously over its 2 Ulysses ranks.
  EXPECT_EQ(zigzag_positions(16, 2, 0, 2, 0), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(zigzag_positions(16, 2, 1, 2, 0), (std::vector<int64_t>{12, 13, 14, 15}));
  EXPECT_EQ(zigzag_positions(16, 2, 1, 2, 1), (std::vector<int64_t>{8, 9, 10, 11}));
  // cp 4, sp 2, seq 16: chunks of 2; CP rank 1 holds chunks 1 and 6 = positions 2, 3, 12, 13.
  EXPECT_EQ(zigzag_positions(16, 2, 0, 4, 1), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(zigzag_positions(16, 2, 1, 4, 1), (std::vector<int64_t>{12, 13}));
  // Every position is held by exactly one (sp rank, cp rank).
  std::vector<int64_t> all;
  for (int64_t c = 0; c < 4; ++c) {
    for (int64_t p = 0; p < 2; ++p) {
      const std::vector<int64_t> mine = zigzag_positions(32, 2, p, 4, c);
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
      all.insert(all.end(), mine.begin(), mine.end());
    }
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], static_cast<int64_t>(i));
}

TEST(EngineData, ZigzagShardShiftsLabelsOnTheWholeSequence) {
  std::vector<int64_t> window;
  for (int64_t i = 0; i <= 8; ++i) window.push_back(100 + i);  // seq 8 + 1
  const Shard s = shard_of(window, 1, 0, kNoEos, /*cp=*/2, /*cp_rank=*/0);  // chunks 0 and 3 of 2 tokens
  EXPECT_EQ(s.positions, (std::vector<int64_t>{0, 1, 6, 7}));
  EXPECT_EQ(s.inputs, (std::vector<int64_t>{100, 101, 106, 107}));
  EXPECT_EQ(s.labels, (std::vector<int64_t>{101, 102, 107, 108}));  // the last label is the window's last token
  EXPECT_EQ(s.first_position, 0);
  EXPECT_TRUE(s.doc_starts.empty());
  EXPECT_EQ(shard_of(window, 1, 0, kNoEos, 2, 1).first_position, 2);
}

// Packed documents on a ring: the whole packed sequence is zigzagged as it is; each rank's tokens
// keep their positions within their documents, and every rank knows all documents' starts.
TEST(EngineData, ZigzagShardOfPackedDocumentsRestartsPositionsPerDocument) {
  // seq 8, EOS = 1: documents [10 11 1] [12 13 14 15 1] (positions 0-2, 3-7), then the last label.
  const std::vector<int64_t> window{10, 11, 1, 12, 13, 14, 15, 1, 16};
  struct Row {
    int64_t sp, sp_rank, cp_rank;
    std::vector<int64_t> inputs, labels, positions;
  };
  const std::vector<Row> table = {
      // cp 2, chunks of 2: rank 0 holds global 0-1 and 6-7, rank 1 holds 2-5.
      {1, 0, 0, {10, 11, 15, 1}, {11, 1, 1, kIgnoreLabel}, {0, 1, 3, 4}},
      {1, 0, 1, {1, 12, 13, 14}, {kIgnoreLabel, 13, 14, 15}, {2, 0, 1, 2}},
      // sp 2 x cp 2: CP rank 1's 4 tokens split contiguously over its two SP ranks.
      {2, 0, 1, {1, 12}, {kIgnoreLabel, 13}, {2, 0}},
      {2, 1, 1, {13, 14}, {14, 15}, {1, 2}},
  };
  for (const Row& r : table) {
    const Shard s = shard_of(window, r.sp, r.sp_rank, /*eos_id=*/1, /*cp=*/2, r.cp_rank);
    const std::string name = "sp " + std::to_string(r.sp) + " rank " + std::to_string(r.sp_rank) + " cp rank " +
                             std::to_string(r.cp_rank);
    EXPECT_EQ(s.inputs, r.inputs) << name;
    EXPECT_EQ(s.labels, r.labels) << name;
    EXPECT_EQ(s.positions, r.positions) << name;
    EXPECT_EQ(s.doc_starts, (std::vector<int64_t>{0, 3})) << name;
  }
}

TEST(EngineData, GlobalBatchIsTheSameForDataParallelMicroBatchAndAccumulation) {
  // Step starting at sequence 8 with a global batch of 2.
  EXPECT_EQ(sequence_index(8, 0, 2, 1, 1, 0), 9);  // dp 2: group 1
  EXPECT_EQ(sequence_index(8, 0, 1, 0, 2, 1), 9);  // micro_batch 2: slot 1
  EXPECT_EQ(sequence_index(8, 1, 1, 0, 1, 0), 9);  // grad_accum 2: micro step 1
}

TEST(EngineData, SyntheticIsDeterministicAndInVocab) {
  const TokenSource a = TokenSource::synthetic(7, 100), b = TokenSource::synthetic(7, 100);
  EXPECT_EQ(a.window(3, 64), b.window(3, 64));
  EXPECT_NE(a.window(3, 64), a.window(4, 64));
  for (int64_t t : a.window(5, 256)) EXPECT_TRUE(t >= 0 && t < 100);
}

TEST(EngineData, FilesAreReadByTheirEndingAndWrapAround) {
  const std::string dir = testing::fresh_dir("data_files");
  const auto text = TokenSource::from_file(testing::write_file(dir, "t.txt", "abc"), 256);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text->window(1, 2), (std::vector<int64_t>{'c', 'a', 'b'}));  // window [2, 5) of "abcabc..."
  const auto u16 = TokenSource::from_file(testing::write_file(dir, "t.u16.bin", std::string("\x01\x00\x02\x01", 4)), 1000);
  ASSERT_TRUE(u16.ok()) << u16.status().message();
  EXPECT_EQ(u16->window(0, 1), (std::vector<int64_t>{1, 258}));
  EXPECT_FALSE(TokenSource::from_file(testing::write_file(dir, "small.txt", "abc"), 100).ok());  // vocab < 256
}

// The reader before memory mapping (the whole file decoded into a vector), kept here as the
// reference the mapped reader must equal.
std::vector<int64_t> read_whole(const std::string& path, int width) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<int64_t> ids;
  for (size_t i = 0; i < bytes.size(); i += static_cast<size_t>(width)) {
    uint64_t id = 0;
    for (int k = 0; k < width; ++k) id |= uint64_t{static_cast<unsigned char>(bytes[i + k])} << (8 * k);
    ids.push_back(static_cast<int64_t>(id));
  }
  return ids;
}

std::vector<int64_t> reference_window(const std::vector<int64_t>& stream, int64_t index, int64_t seq_len) {
  std::vector<int64_t> w;
  const auto n = static_cast<int64_t>(stream.size());
  for (int64_t t = 0; t <= seq_len; ++t) w.push_back(stream[static_cast<size_t>((index * seq_len + t) % n)]);
  return w;
}

// little-endian bytes of `ids`, `width` bytes each
std::string encode(const std::vector<int64_t>& ids, int width) {
  std::string b;
  for (int64_t id : ids) {
    for (int k = 0; k < width; ++k) b.push_back(static_cast<char>((static_cast<uint64_t>(id) >> (8 * k)) & 0xff));
  }
  return b;
}

std::vector<int64_t> random_ids(size_t n, int64_t vocab, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<int64_t> ids(n);
  for (auto& id : ids) id = static_cast<int64_t>(gen() % static_cast<uint32_t>(vocab));
  return ids;
}

TEST(EngineData, MappedFilesReadTheSameWindowsAsReadingTheWholeFile) {
  const std::string dir = testing::fresh_dir("data_mmap");
  const int64_t vocab = 100000;  // u32 ids above 65535 too
  const struct {
    std::string name;
    int width;
    int64_t vocab;
  } files[] = {{"a.u16.bin", 2, 50000}, {"a.u32.bin", 4, vocab}};
  for (const auto& f : files) {
    const std::string path = testing::write_file(dir, f.name, encode(random_ids(10007, f.vocab, 3), f.width));
    const auto mapped = TokenSource::from_file(path, vocab);
    ASSERT_TRUE(mapped.ok()) << mapped.status().message();
    const std::vector<int64_t> whole = read_whole(path, f.width);
    for (int64_t index : {0, 1, 7, 102, 103, 5000}) {  // 97 * 103 > 10007: wraps around
      EXPECT_EQ(mapped->window(index, 97), reference_window(whole, index, 97)) << f.name << " " << index;
    }
  }
  const std::string text = "héllo wörld, a text file read as UTF-8 bytes\n";
  const auto t = TokenSource::from_file(testing::write_file(dir, "a.txt", text), 256);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const std::vector<int64_t> bytes(text.begin(), text.end());
  std::vector<int64_t> unsigned_bytes;
  for (int64_t b : bytes) unsigned_bytes.push_back(b & 0xff);
  for (int64_t index : {0, 3, 11}) EXPECT_EQ(t->window(index, 13), reference_window(unsigned_bytes, index, 13));
}

TEST(EngineData, SeveralFilesAreOneStreamInTheOrderGiven) {
  const std::string dir = testing::fresh_dir("data_list");
  const std::vector<int64_t> a{1, 2, 3, 4, 5}, b{70000, 71000, 72000}, c{'x', 'y'};
  const std::string pa = testing::write_file(dir, "a.u16.bin", encode(a, 2));
  const std::string pb = testing::write_file(dir, "b.u32.bin", encode(b, 4));
  const std::string pc = testing::write_file(dir, "c.txt", "xy");
  const auto s = TokenSource::open({pa, pb, pc}, 100000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->num_tokens(), 10);
  std::vector<int64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  for (int64_t index = 0; index < 12; ++index) {
    EXPECT_EQ(s->window(index, 3), reference_window(all, index, 3)) << index;  // crosses files and wraps
  }
  EXPECT_EQ(s->window(1, 4), (std::vector<int64_t>{5, 70000, 71000, 72000, 'x'}));
  // The same stream as one file reads the same.
  const auto one = TokenSource::from_file(testing::write_file(dir, "all.u32.bin", encode(all, 4)), 100000);
  ASSERT_TRUE(one.ok());
  for (int64_t index = 0; index < 12; ++index) EXPECT_EQ(s->window(index, 7), one->window(index, 7)) << index;
}

// A data file named in Latin-1 (a byte that is not UTF-8): the fingerprint a checkpoint's JSON
// manifest holds is UTF-8, the byte shown as \xNN, and the same on every open, so a resume matches.
TEST(EngineData, AFingerprintIsUtf8WhateverTheFileName) {
  const std::string dir = testing::fresh_dir("data_latin1");
  const std::string path = testing::write_file(dir, "donn\xe9" "es.u16.bin", encode(std::vector<int64_t>{1, 2, 3, 4}, 2));
  const auto s = TokenSource::open({path}, 100000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->fingerprint().find("donn\\xe9es.u16.bin"), std::string::npos) << s->fingerprint();
  EXPECT_NO_THROW((void)nlohmann::json(s->fingerprint()).dump());
  EXPECT_EQ(TokenSource::open({path}, 100000)->fingerprint(), s->fingerprint());
}

TEST(EngineData, ErrorsInAListNameTheFileAndTheTokenWithinIt) {
  const std::string dir = testing::fresh_dir("data_list_errors");
  const std::string ok = testing::write_file(dir, "ok.u16.bin", encode({1, 2, 3}, 2));
  const std::string bad = testing::write_file(dir, "bad.u16.bin", encode({1, 2, 3, 999, 4}, 2));
  auto r = TokenSource::open({ok, bad}, 500);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--data: " + bad + ": token 3 has id 999 (allowed: ids below the model's vocab_size 500)");
  r = TokenSource::open({ok, dir + "/missing.u16.bin"}, 500);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--data: " + dir + "/missing.u16.bin: cannot open (no such file)");
  r = TokenSource::open({ok}, 500, 500);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--eos-id: value 500 is not below the model's vocab_size 500 (allowed: 0 to 499)");
  // A bad id deep in a large file, past the first scan block of 65536 ids.
  std::vector<int64_t> big(200000, 7);
  big[150001] = 60000;
  const std::string deep = testing::write_file(dir, "deep.u16.bin", encode(big, 2));
  r = TokenSource::from_file(deep, 50000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--data: " + deep + ": token 150001 has id 60000 (allowed: ids below the model's vocab_size 50000)");
}

TEST(EngineData, LabelsThatCrossADocumentEndAreIgnored) {
  // Documents [10 11 EOS] [12 EOS] [13 14 ...] with EOS = 1; window of seq 7.
  const std::vector<int64_t> window{10, 11, 1, 12, 1, 13, 14, 15};
  const Shard whole = shard_of(window, 1, 0, 1);
  EXPECT_EQ(whole.inputs, (std::vector<int64_t>{10, 11, 1, 12, 1, 13, 14}));
  // position t's label is ignored exactly where input t is the EOS (2 and 4); the EOS itself is a label
  EXPECT_EQ(whole.labels, (std::vector<int64_t>{11, 1, kIgnoreLabel, 1, kIgnoreLabel, 14, 15}));
  // sp 2: 7 tokens padded to 8; the mask follows the inputs onto each rank.
  const Shard r0 = shard_of(window, 2, 0, 1), r1 = shard_of(window, 2, 1, 1);
  EXPECT_EQ(r0.labels, (std::vector<int64_t>{11, 1, kIgnoreLabel, 1}));
  EXPECT_EQ(r1.labels, (std::vector<int64_t>{kIgnoreLabel, 14, 15, kIgnoreLabel}));
  // Positions restart after each EOS; every rank knows where all documents start (the padding
  // continues the last one).
  EXPECT_EQ(whole.positions, (std::vector<int64_t>{0, 1, 2, 0, 1, 0, 1}));
  EXPECT_EQ(whole.doc_starts, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(r0.positions, (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(r1.positions, (std::vector<int64_t>{1, 0, 1, 2}));
  EXPECT_EQ(r0.doc_starts, r1.doc_starts);
  EXPECT_EQ(r1.doc_starts, (std::vector<int64_t>{0, 3, 5}));
  // Without an EOS id nothing is masked but the padding, and positions are the global ones.
  EXPECT_EQ(shard_of(window, 1, 0).labels, (std::vector<int64_t>{11, 1, 12, 1, 13, 14, 15}));
  EXPECT_TRUE(shard_of(window, 1, 0).positions.empty());
  // The source carries its EOS id to the trainer.
  EXPECT_EQ(TokenSource::open({}, 100, 1)->eos_id(), 1);
  EXPECT_EQ(TokenSource::open({}, 100)->eos_id(), kNoEos);
}

}  // namespace
}  // namespace spplan::engine

namespace spplan::engine {
namespace {

// A u16 file holding ids 0..n-1: each window's first token says which window it is.
std::string counting_file(const std::string& dir, int n) {
  std::string bytes;
  for (int i = 0; i < n; ++i) bytes += std::string{static_cast<char>(i & 0xff), static_cast<char>(i >> 8)};
  return testing::write_file(dir, "count.u16.bin", bytes);
}

// --shuffle: each pass reads every whole window exactly once, in an order fixed by (seed, pass),
// and the next pass in another order.
TEST(EngineData, ShuffleReadsEveryWindowOncePerPassInASeededOrder) {
  const std::string dir = testing::fresh_dir("data_shuffle");
  const std::string path = counting_file(dir, 1001);  // (1001 - 1) / 10 = 100 windows of 10 (+ 1 label)
  const auto a = TokenSource::open({path}, 4096, kNoEos, 7, true);
  const auto b = TokenSource::open({path}, 4096, kNoEos, 7, true);
  const auto other_seed = TokenSource::open({path}, 4096, kNoEos, 8, true);
  ASSERT_TRUE(a.ok() && b.ok() && other_seed.ok());
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<int> seen(100, 0);
    for (int i = 0; i < 100; ++i) {
      const std::vector<int64_t> w = a->window(pass * 100 + i, 10);
      ASSERT_EQ(w.front() % 10, 0);  // a whole window, starting at a multiple of seq
      EXPECT_EQ(w.back(), w.front() + 10);
      ++seen[static_cast<size_t>(w.front() / 10)];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 100) << "pass " << pass;
  }
  std::vector<int64_t> first_pass, second_pass, same, other;
  for (int i = 0; i < 100; ++i) {
    first_pass.push_back(a->window(i, 10).front());
    second_pass.push_back(a->window(100 + i, 10).front());
    same.push_back(b->window(i, 10).front());
    other.push_back(other_seed->window(i, 10).front());
  }
  EXPECT_EQ(first_pass, same);         // the same seed: the same order, run after run
  EXPECT_NE(first_pass, second_pass);  // each pass its own order
  EXPECT_NE(first_pass, other);
  EXPECT_NE(a->fingerprint(), TokenSource::open({path}, 4096)->fingerprint());  // "shuffled" is part of it
}

TEST(EngineData, PassesCountHowOftenTheRunReadsTheData) {
  const std::string dir = testing::fresh_dir("data_passes");
  const auto plain = TokenSource::open({counting_file(dir, 1000)}, 4096);
  ASSERT_TRUE(plain.ok());
  EXPECT_DOUBLE_EQ(plain->passes(50, 10), 0.5);   // 500 of 1000 tokens
  EXPECT_DOUBLE_EQ(plain->passes(400, 10), 4.0);
  EXPECT_DOUBLE_EQ(TokenSource::synthetic(1, 4096).passes(400, 10), 0.0);
  EXPECT_EQ(TokenSource::synthetic(1, 4096).fingerprint(), "synthetic");
}

// The fingerprint a checkpoint keeps: the name, not the folder (a moved file is the same data),
// the count and the head's checksum (another file of the same name and size is not).
TEST(EngineData, FingerprintNamesTheFileNotItsFolder) {
  const std::string a = testing::fresh_dir("data_fp_a"), b = testing::fresh_dir("data_fp_b");
  const auto one = TokenSource::open({counting_file(a, 300)}, 4096);
  const auto moved = TokenSource::open({counting_file(b, 300)}, 4096);
  ASSERT_TRUE(one.ok() && moved.ok());
  const std::string fingerprint = one->fingerprint();
  EXPECT_EQ(fingerprint, moved->fingerprint());
  EXPECT_EQ(fingerprint.rfind("count.u16.bin 300 tokens ", 0), 0u) << fingerprint;
  // The same name and size, other tokens (in another folder: the mapped files above stay as they are).
  const std::string c = testing::fresh_dir("data_fp_c");
  const auto changed = TokenSource::open({testing::write_file(c, "count.u16.bin", std::string(600, '\x01'))}, 4096);
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(fingerprint, changed->fingerprint());
}

}  // namespace
}  // namespace spplan::engine
