// plan, fit, rent and estimate over a corpus (--lengths, --packing, --epochs): the corpus's line,
// the epoch's time and price, the searched sequence length, and the flags' bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "run_spplan.hpp"
#include "tests/scratch_dir.hpp"

namespace {

using spplan::cli_test::run_spplan;
using spplan::testing_scratch::ScratchDir;

// A run's log to check a plan against: HF's trainer_state.json of the check tests' data.
const std::string kRunLog = std::string(SPPLAN_SOURCE_DIR) + "/tests/planner/check/data/hf_sp2/trainer_state.json";

// 1,000 documents: 900 of 2,000 tokens and 100 of 30,000 (the long tail), 4.8M tokens.
std::string write_lengths(const ScratchDir& dir) {
  const std::string path = dir.path() + "/lengths.csv";
  std::ofstream(path) << "length,count\n2000,900\n30000,100\n";
  return path;
}

const std::string kCluster = "--model qwen3-4b --gpu h100-80gb --gpus 4 --trainer usp";

TEST(CliCorpus, PlanAtALengthPricesTheEpoch) {
  const ScratchDir dir("cli_corpus_plan");
  const auto r = run_spplan("plan " + kCluster + " --seq 32k --lengths " + write_lengths(dir) + " --top 2 --epochs 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("corpus: 1,000 documents"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4,800,000 tokens, longest 30,000; packed bfd into"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("real tok/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("$/epoch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention per document"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  3 epochs: "), std::string::npos) << r.out;
}

TEST(CliCorpus, PlanJsonNamesTheCorpusAndTheEpoch) {
  const ScratchDir dir("cli_corpus_json");
  const auto r = run_spplan("plan " + kCluster + " --seq 32k --lengths " + write_lengths(dir) + " --top 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& c = j["plans"][0]["corpus"];
  EXPECT_EQ(c["real_tokens"].get<double>(), 4.8e6);
  EXPECT_EQ(c["attention"], "per document");
  EXPECT_GT(c["epoch_s"].get<double>(), 0);
  // The epoch's steps cover its sequences: steps x sequences a step >= sequences.
  EXPECT_GE(c["epoch_steps"].get<double>() * j["plans"][0]["global_batch"].get<double>(), c["sequences"].get<double>());
  EXPECT_TRUE(j["seq_search"].is_null());
}

TEST(CliCorpus, WithoutSeqTheLengthIsSearchedAndKeepsTheLongDocumentsWhole) {
  const ScratchDir dir("cli_corpus_seq");
  const auto r = run_spplan("plan " + kCluster + " --lengths " + write_lengths(dir) + " --top 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["seq_search"].is_array());
  int chosen = 0;
  for (const auto& row : j["seq_search"]) {
    if (row["chosen"].get<bool>()) {
      ++chosen;
      // 99% of the documents whole: the 30,000-token ones too (they are 10%).
      EXPECT_EQ(row["documents_whole"], 1000);
      EXPECT_EQ(row["seq"], j["seq"]);
    }
  }
  EXPECT_EQ(chosen, 1);
  EXPECT_GE(j["seq"].get<int64_t>(), 30000);
  const auto text = run_spplan("plan " + kCluster + " --lengths " + write_lengths(dir) + " --top 1");
  EXPECT_NE(text.out.find("sequence lengths tried (bfd packing"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("<- chosen"), std::string::npos) << text.out;
}

TEST(CliCorpus, FitRentAndEstimatePriceTheCorpus) {
  const ScratchDir dir("cli_corpus_commands");
  const std::string lengths = write_lengths(dir);
  const auto fit = run_spplan("fit " + kCluster + " --seq 32k --lengths " + lengths);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("epoch: "), std::string::npos) << fit.out;
  const auto rent = run_spplan("rent --model qwen3-4b --seq 32k --trainer usp --nodes 1 --lengths " + lengths + " --epochs 2");
  ASSERT_EQ(rent.exit_code, 0) << rent.err;
  EXPECT_NE(rent.out.find("2 epochs"), std::string::npos) << rent.out;
  const auto estimate = run_spplan("estimate " + kCluster + " --seq 32k --sp 4 --lengths " + lengths + " --json");
  ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
  EXPECT_EQ(nlohmann::json::parse(estimate.out)["corpus"]["attention"], "per document");
}

// A plan made for a corpus and saved keeps its documents: checking a run against the file predicts
// the step plan printed (attention per document), not one document a sequence's longer step.
TEST(CliCorpus, APlanFileKeepsTheDocumentsItWasPricedOver) {
  const ScratchDir dir("cli_corpus_plan_file");
  const std::string plan = dir.path() + "/plan.toml";
  const auto r = run_spplan("plan " + kCluster + " --seq 32k --lengths " + write_lengths(dir) + " --top 1 --out " + plan +
                            " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double planned = nlohmann::json::parse(r.out)["plans"][0]["step_time_s"].get<double>();
  const auto predicted_step = [](const std::string& plan_file) {
    const auto c = run_spplan("check --plan " + plan_file + " " + kRunLog + " --json");
    EXPECT_NE(c.exit_code, 2) << c.err;
    const nlohmann::json report = nlohmann::json::parse(c.out);  // named: a range-for keeps no temporary alive
    for (const auto& row : report["comparisons"]) {
      if (row["quantity"] == "step_time") return row["predicted"].get<double>();
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(predicted_step(plan), planned);
  // The same file without its [documents] table prices each sequence as one document: slower.
  std::ifstream in(plan);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t table = text.find("\n# What the sequences hold");
  ASSERT_NE(table, std::string::npos) << text;
  std::ofstream(dir.path() + "/one_document.toml") << text.substr(0, table);
  EXPECT_GT(predicted_step(dir.path() + "/one_document.toml"), planned * 1.05);
}

TEST(CliCorpus, BadCorpusFlagsAreOneLineAndExit2) {
  const ScratchDir dir("cli_corpus_bad");
  const std::string lengths = write_lengths(dir);
  const struct {
    std::string args, message;
  } cases[] = {
      {"plan " + kCluster + " --seq 32k --packing bfd", "--packing: needs --lengths (allowed: with a corpus's lengths file)\n"},
      {"plan " + kCluster + " --seq 32k --epochs 2", "--epochs: needs --lengths (allowed: with a corpus's lengths file)\n"},
      {"plan " + kCluster + " --seq 32k --lengths " + lengths + " --epochs 0",
       "--epochs: value \"0\" is not allowed (allowed: a whole number from 1 to 1000)\n"},
      {"rent --model qwen3-4b --seq 32k --lengths " + lengths + " --tokens 1e9",
       "--tokens: with --lengths the budget is the corpus's epochs (allowed: one of them)\n"},
      {"estimate --model qwen3-4b --gpu h100-80gb --gpus 1 --trainer hf --seq 32k --sp 1 --attention sdpa --lengths " + lengths,
       "--attention: value \"sdpa\" with packed documents, which trainer \"hf\" runs through a dense [s, s] document mask, not "
       "priced (allowed: flash2, flash3 or flex)\n"},
  };
  for (const auto& c : cases) {
    const auto r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.err, "spplan: " + c.message) << c.args;
  }
  const auto packing = run_spplan("plan " + kCluster + " --seq 32k --lengths " + lengths + " --packing tight");
  EXPECT_EQ(packing.exit_code, 2);
  EXPECT_NE(packing.err.find("--packing: value \"tight\""), std::string::npos) << packing.err;
}

}  // namespace
