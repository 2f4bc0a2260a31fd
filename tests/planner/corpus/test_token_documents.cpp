// Counting the documents of token files: ids written here little-endian, as scripts/tokenize.py
// writes them, and the files that are refused with each one's message.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "planner/corpus/token_documents.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::corpus {
namespace {

using Histogram = std::vector<std::pair<int64_t, int64_t>>;
using testing_scratch::ScratchDir;

std::string write_ids(const std::string& path, const std::vector<uint32_t>& ids, int width) {
  std::ofstream out(path, std::ios::binary);
  for (const uint32_t id : ids) {
    for (int b = 0; b < width; ++b) out.put(static_cast<char>((id >> (8 * b)) & 0xFF));
  }
  return path;
}

// EOS 2. a: [7 9 2] [5 2] [2] [8 8 8 | continued in b: 1 2] [4 4]: lengths 3, 2, 1, 5 and a last 2
// with no EOS after it.
TEST(TokenDocuments, CountsDocumentsAcrossFilesAsOneStream) {
  const ScratchDir dir("token_documents");
  const std::string a = write_ids(dir.path() + "/a.u16.bin", {7, 9, 2, 5, 2, 2, 8, 8, 8}, 2);
  const std::string b = write_ids(dir.path() + "/b.u32.bin", {1, 2, 4, 4}, 4);
  const auto counted = count_token_documents({a, b}, 2);
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  EXPECT_EQ(counted->corpus.length_counts, (Histogram{{1, 1}, {2, 2}, {3, 1}, {5, 1}}));
  EXPECT_EQ(counted->eos_tokens, 4);
  EXPECT_EQ(counted->trailing_tokens, 2);
  // An id past 16 bits, read little-endian: 0x00012345 is the EOS, 0x00002345 is not.
  const std::string wide = write_ids(dir.path() + "/w.u32.bin", {0x2345, 0x12345, 0x12345}, 4);
  const auto w = count_token_documents({wide}, 0x12345);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->corpus.length_counts, (Histogram{{1, 1}, {2, 1}}));
  EXPECT_EQ(w->trailing_tokens, 0);
}

TEST(TokenDocuments, BadFilesTable) {
  const ScratchDir dir("token_documents_bad");
  const std::string d = dir.path();
  write_ids(d + "/ok.u16.bin", {1, 2}, 2);
  std::ofstream(d + "/empty.u16.bin").close();
  std::ofstream(d + "/odd.u16.bin") << "abc";
  std::ofstream(d + "/corpus.jsonl") << "{\"text\": \"hi\"}\n";
  std::ofstream(d + "/tokens.bin") << "ab";
  const struct {
    std::string path;
    int64_t eos;
    std::string message;
  } cases[] = {
      {d + "/missing.u16.bin", 2, d + "/missing.u16.bin: cannot open (no such file)"},
      {d, 2, d + ": cannot open (a directory; allowed: a file)"},
      {d + "/empty.u16.bin", 2, d + "/empty.u16.bin: empty file (allowed: at least one token)"},
      {d + "/odd.u16.bin", 2, d + "/odd.u16.bin: size 3 bytes is not a multiple of 2 (allowed: whole uint16 token ids)"},
      {d + "/ok.u16.bin", 65536, d + "/ok.u16.bin: EOS id 65536 is not a uint16 token id (allowed: 0 to 65535 in a *.u16.bin)"},
      {d + "/corpus.jsonl", 2,
       d + "/corpus.jsonl: JSON lines, not token ids (allowed: *.u16.bin / *.u32.bin; make one with scripts/tokenize.py "
           "--tokenizer YOUR_MODEL_FOLDER --out " + d + "/corpus " + d + "/corpus.jsonl)"},
      {d + "/tokens.bin", 2,
       d + "/tokens.bin: not a token file (allowed: *.u16.bin / *.u32.bin, little-endian token ids as scripts/tokenize.py "
           "writes them)"},
  };
  for (const auto& c : cases) {
    const auto counted = count_token_documents({c.path}, c.eos);
    ASSERT_FALSE(counted.ok()) << c.path;
    EXPECT_EQ(counted.status().message(), c.message);
  }
}

TEST(TokenDocuments, TokenizeHintQuotesWhatAShellWouldSplit) {
  EXPECT_EQ(tokenize_hint("my docs.json.gz"),
            "scripts/tokenize.py --tokenizer YOUR_MODEL_FOLDER --out 'my docs' 'my docs.json.gz'");
}

}  // namespace
}  // namespace spplan::corpus
