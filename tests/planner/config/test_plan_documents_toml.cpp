// A plan file's [documents] table: a plan made for a corpus keeps what its sequences hold, read back
// as written, and each bad value refused in one line naming the key.
#include "planner/config/plan_documents_toml.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

PlanSpec usp_plan() {
  PlanSpec p;
  p.model = *load_model("qwen3-4b");
  p.cluster.gpu = *load_gpu("h100-80gb");
  p.cluster.num_gpus = 4;
  p.seq_len = 32768;
  p.knobs.sp = 4;
  p.stack = trainer_stack("usp");
  return p;
}

std::string plan_path() { return testing::TempDir() + "/plan_documents." + std::to_string(getpid()) + ".toml"; }

Result<PlanSpec> read_back(const std::string& text) {
  const std::string path = plan_path();
  std::ofstream(path) << text;
  Result<PlanSpec> back = load_plan(path);
  std::remove(path.c_str());
  return back;
}

TEST(PlanDocumentsToml, APackedPlanKeepsItsDocuments) {
  PlanSpec p = usp_plan();
  p.documents.length_counts = {{2000, 900}, {30000, 100}, {32768, 3}};
  p.documents.sequences = 171;
  p.packed_documents = true;
  const std::string text = plan_to_toml(p);
  EXPECT_NE(text.find("[documents]\npacked = true\nsequences = 171\npieces = [[2000, 900], [30000, 100], [32768, 3]]\n"),
            std::string::npos)
      << text;
  const auto back = read_back(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->documents.length_counts, p.documents.length_counts);
  EXPECT_EQ(back->documents.sequences, 171);
  EXPECT_TRUE(back->packed_documents);
  EXPECT_EQ(plan_to_toml(*back), text);
}

// Nine pieces: the list breaks its line after every eight, and reads back whole.
TEST(PlanDocumentsToml, ALongListReadsBackWhole) {
  PlanSpec p = usp_plan();
  for (int64_t n = 1; n <= 9; ++n) p.documents.length_counts.emplace_back(1000 * n, n);
  p.documents.sequences = 100;
  const std::string text = plan_to_toml(p);
  EXPECT_NE(text.find("[8000, 8],\n  [9000, 9]]"), std::string::npos) << text;
  const auto back = read_back(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->documents.length_counts, p.documents.length_counts);
  EXPECT_FALSE(back->packed_documents);
}

TEST(PlanDocumentsToml, APlanWithoutDocumentsWritesNoTable) {
  const PlanSpec p = usp_plan();
  EXPECT_EQ(documents_toml(p), "");
  const auto back = read_back(plan_to_toml(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->documents.empty());
  EXPECT_FALSE(back->packed_documents);
}

// Each bad table: exit-2 words, one line, naming the key (the plan is at seq_len 32768).
TEST(PlanDocumentsToml, EachBadValueIsOneLineNamingItsKey) {
  const std::string base = plan_to_toml(usp_plan());
  const struct {
    const char* table;
    const char* words;
  } cases[] = {
      {"documents = 3\n", "key \"documents\": value 3 is not allowed (allowed: a table with packed, sequences and pieces)"},
      {"[documents]\nsequences = 2\npieces = [[10, 1]]\n", "key \"documents.packed\""},
      {"[documents]\npacked = true\npieces = [[10, 1]]\n", "key \"documents.sequences\""},
      {"[documents]\npacked = true\nsequences = 2\n", "key \"documents.pieces\": value (missing) is not allowed"},
      {"[documents]\npacked = true\nsequences = 2\npieces = []\n", "key \"documents.pieces\": value (an array) is not allowed (allowed: a list of 1 to 65536 [length, count] pairs)"},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[0, 1]]\n",
       "key \"documents.pieces[0]\": value (an array) is not allowed (allowed: [length, count], whole numbers, 1 <= length <= "
       "seq_len 32768, count >= 1, lengths ascending)"},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[40000, 1]]\n", "key \"documents.pieces[0]\": value (an array)"},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[10, 0]]\n", "key \"documents.pieces[0]\": value (an array)"},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[10, 1], [10, 1]]\n", "key \"documents.pieces[1]\""},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[10, 1.5]]\n", "key \"documents.pieces[0]\""},
      {"[documents]\npacked = true\nsequences = 2\npieces = [10]\n", "key \"documents.pieces[0]\": value 10"},
      {"[documents]\npacked = true\nsequences = 1\npieces = [[32768, 2]]\n",
       "key \"documents.sequences\": value 1 is not allowed (allowed: enough sequences of seq_len 32768 for the pieces' "
       "65536 tokens)"},
      {"[documents]\npacked = false\nsequences = 2\npieces = [[10, 3]]\n",
       "key \"documents.sequences\": value 2 is not allowed (allowed: enough sequences of seq_len 32768 for the pieces' 30 "
       "tokens, one piece a sequence when not packed)"},
      {"[documents]\npacked = true\nsequences = 2\npieces = [[10, 1]]\nextra = 1\n", "key \"documents.extra\""},
  };
  for (const auto& c : cases) {
    // A top-level key goes above the tables (below them it would be the last table's).
    const std::string table = c.table;
    const auto back = read_back(table.front() == '[' ? base + table : table + base);
    ASSERT_FALSE(back.ok()) << c.table;
    const std::string message = back.status().message();
    EXPECT_NE(message.find(c.words), std::string::npos) << c.table << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace spplan
