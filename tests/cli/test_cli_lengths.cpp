// spplan lengths as a script calls it: a token file written here, the lengths file on stdout or
// in --out (read back as plan --lengths reads it), the --json summary, and bad input: one line,
// exit 2, nothing on stdout.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/corpus/corpus.hpp"
#include "tests/cli/run_spplan.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using spplan::cli_test::run_spplan;
using spplan::testing_scratch::ScratchDir;

// EOS 2: [7 9 2] [5 2] [2] [8 8 2]: lengths 3, 2, 1, 3 (9 tokens).
std::string write_corpus(const std::string& dir) {
  const std::string path = dir + "/corpus.u16.bin";
  std::ofstream out(path, std::ios::binary);
  for (const uint16_t id : std::vector<uint16_t>{7, 9, 2, 5, 2, 2, 8, 8, 2}) {
    out.put(static_cast<char>(id & 0xFF));
    out.put(static_cast<char>(id >> 8));
  }
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CliLengths, WritesTheLengthsFileToStdoutOrOut) {
  const ScratchDir dir("cli_lengths");
  const std::string data = write_corpus(dir.path());
  const std::string expected = "# document lengths of " + data +
                               " (EOS id 2), counted by spplan lengths\nlength,count\n1,1\n2,1\n3,2\n";
  const auto printed = run_spplan("lengths " + data + " --eos-id 2");
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(printed.out, expected);
  EXPECT_TRUE(printed.err.empty()) << printed.err;

  const std::string out = dir.path() + "/lengths.csv";
  const auto written = run_spplan("lengths " + data + " --eos-id 2 --out " + out);
  EXPECT_EQ(written.exit_code, 0) << written.err;
  // Nearest rank over {1, 2, 3, 3}: 0.5 -> the 2nd (2), 0.9 and 0.99 -> the 4th (3).
  EXPECT_EQ(written.out, "wrote " + out + ": 4 documents, 9 tokens, longest 3; lengths at 0.5 / 0.9 / 0.99 of the "
                         "documents: 2 3 3\n");
  EXPECT_EQ(read_text(out), expected);
  const auto back = spplan::corpus::read_lengths_file(out);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->length_counts, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 1}, {3, 2}}));
}

TEST(CliLengths, JsonIsTheSummary) {
  const ScratchDir dir("cli_lengths_json");
  const std::string data = write_corpus(dir.path());
  const auto r = run_spplan("lengths " + data + " --eos-id 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["documents"], 4);
  EXPECT_EQ(j["tokens"], 9);
  EXPECT_EQ(j["longest"], 3);
  EXPECT_EQ(j["distinct_lengths"], 3);
  EXPECT_EQ(j["quantiles"], (nlohmann::json{{"0.5", 2}, {"0.9", 3}, {"0.99", 3}}));
  EXPECT_EQ(j["data"], nlohmann::json::array({data}));
  EXPECT_TRUE(j["out"].is_null());
}

TEST(CliLengths, AnIdThatOccursNowhereIsOneDocumentAndAWarning) {
  const ScratchDir dir("cli_lengths_warn");
  const std::string data = write_corpus(dir.path());
  const auto r = run_spplan("lengths " + data + " --eos-id 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["documents"], 1);
  EXPECT_EQ(r.err, "spplan: warning: --eos-id 3 occurs nowhere in " + data +
                       ": counted as one document of 9 tokens (is it the data's EOS? scripts/tokenize.py's last line "
                       "names it)\n");
}

TEST(CliLengths, BadInputIsOneLineAndExitTwo) {
  const ScratchDir dir("cli_lengths_bad");
  const std::string data = write_corpus(dir.path());
  const std::string jsonl = dir.path() + "/docs.jsonl";
  std::ofstream(jsonl) << "{\"text\": \"hello\"}\n";
  const struct {
    std::string args, err;
  } cases[] = {
      {"lengths --eos-id 2",
       "spplan: DATA: missing (required: one or more token files, *.u16.bin / *.u32.bin as scripts/tokenize.py writes "
       "them)\n"},
      {"lengths " + data,
       "spplan: --eos-id: missing (required: the token id that ends each document; scripts/tokenize.py's last line names "
       "it)\n"},
      {"lengths " + data + " --eos-id -1",
       "spplan: --eos-id: value \"-1\" is not allowed (allowed: a whole number from 0 to 4294967295)\n"},
      {"lengths " + data + " --eos-id 4294967296",
       "spplan: --eos-id: value \"4294967296\" is not allowed (allowed: a whole number from 0 to 4294967295)\n"},
      {"lengths " + data + " --eos-id 70000",
       "spplan: " + data + ": EOS id 70000 is not a uint16 token id (allowed: 0 to 65535 in a *.u16.bin)\n"},
      {"lengths " + data + " --eos-id 2 --seq 4", "spplan: --seq: unknown flag (allowed: --eos-id, --out, --json)\n"},
      {"lengths " + jsonl + " --eos-id 2",
       "spplan: " + jsonl + ": JSON lines, not token ids (allowed: *.u16.bin / *.u32.bin; make one with "
       "scripts/tokenize.py --tokenizer YOUR_MODEL_FOLDER --out " + dir.path() + "/docs " + jsonl + ")\n"},
      {"lengths " + dir.path() + "/absent.u16.bin --eos-id 2",
       "spplan: " + dir.path() + "/absent.u16.bin: cannot open (no such file)\n"},
      {"lengths " + data + " --eos-id 2 --out " + data,
       "spplan: --out: " + data + " is the DATA file " + data +
           " (an input is never written; allowed: a path apart from every input)\n"},
      {"lengths " + data + " --eos-id 2 --out " + dir.path(),
       "spplan: --out: " + dir.path() + " holds the DATA file " + data +
           " (an input is never written; allowed: a path apart from every input)\n"},
  };
  for (const auto& c : cases) {
    const auto r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
