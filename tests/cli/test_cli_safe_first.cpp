// Safe first in every searching command: plan, fit, max-seq and rent name each answer's group
// (safe: more GPU memory free than the largest measured memory error; risky: inside it), rank the
// safe ones first unless --risky, and say what the line is held against when nothing was measured.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run_spplan.hpp"

namespace {

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;

// Rows of the plan table whose group column reads `group`.
int rows_in_group(const std::string& out, const std::string& group) {
  int n = 0;
  for (size_t at = out.find("\n"); at != std::string::npos; at = out.find("\n", at + 1)) {
    const std::string line = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0])) && line.find(" " + group + " ") == 4) ++n;
  }
  return n;
}

// A B200 has no measured run: the plan says so and holds each plan against the stated default.
TEST(CliSafeFirst, WithNothingMeasuredThePlanSaysSoAndHoldsTheDefaultHeadroom) {
  const CliRun r = run_spplan("plan --model qwen3-8b --gpu b200 --gpus 8 --seq 512k --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("safe: more than 15.0% of GPU memory free, a default headroom: no memory error was measured for "
                       "arctic on b200 (the largest measured for any trainer on any GPU, rounded up)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("against the 15.0% default headroom\n"), std::string::npos) << r.out;
  EXPECT_EQ(rows_in_group(r.out, "safe"), 3) << r.out;
  const CliRun j = run_spplan("plan --model qwen3-8b --gpu b200 --gpus 8 --seq 512k --top 3 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto safety = nlohmann::json::parse(j.out)["safety"];
  EXPECT_FALSE(safety["measured"].get<bool>());
  EXPECT_DOUBLE_EQ(safety["margin_pct"].get<double>(), 15.0);
}

// The case a renter lost: llama-3.1-8b on 2 x 6 H100s at 128K, whose fastest plan leaves 0.4% free
// against a 14.8% measured error.
const char* kTightCase = "--model llama-3.1-8b --gpu h100-80gb --gpus 12 --gpus-per-node 6 --seq 128k";

// --risky: by speed alone, so the risky plan the default shows beside row 1 is row 1.
TEST(CliSafeFirst, RiskyRanksTheFastestPlanFirst) {
  const std::string args = std::string("plan ") + kTightCase + " --top 1 --json";
  const CliRun safe = run_spplan(args), risky = run_spplan(args + " --risky");
  ASSERT_EQ(safe.exit_code, 0) << safe.err;
  ASSERT_EQ(risky.exit_code, 0) << risky.err;
  const auto s = nlohmann::json::parse(safe.out), k = nlohmann::json::parse(risky.out);
  ASSERT_TRUE(s["safety"]["fastest_risky"].is_object()) << safe.out;
  EXPECT_EQ(k["plans"][0]["group"], "risky");
  EXPECT_EQ(s["plans"][0]["group"], "safe");
  EXPECT_GT(k["plans"][0]["tokens_per_s"].get<double>(), s["plans"][0]["tokens_per_s"].get<double>());
  EXPECT_EQ(k["safety"]["fastest_risky"], nullptr);  // row 1 is the fastest: the best safe plan is shown beside it
  ASSERT_TRUE(k["safety"]["best_safe"].is_object()) << risky.out;
  EXPECT_GT(k["safety"]["best_safe"]["speed_loss_pct"].get<double>(), 0);
  EXPECT_GT(k["safety"]["best_safe"]["margin_pct"].get<double>(), 14.8);
}

TEST(CliSafeFirst, FitNamesTheGroupOfItsBestPlan) {
  const CliRun r = run_spplan("fit --model qwen3-8b --gpu b200 --gpus 8 --seq 512k");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" tokens/s, safe)\nsafe: more than 15.0% of GPU memory free"), std::string::npos) << r.out;
  const CliRun j = run_spplan(std::string("fit ") + kTightCase + " --risky --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto fit = nlohmann::json::parse(j.out);
  EXPECT_EQ(fit["best"]["group"], "risky");
  EXPECT_EQ(fit["safety"]["ranking"], "speed_only");
}

// qwen3-32b at 1M on H100s: 4 GPUs fit, only inside the measured error; 8 are the smallest count
// with a safe plan, said beside the smallest that fits.
TEST(CliSafeFirst, FitSaysTheSmallestCountWithASafePlan) {
  const CliRun j = run_spplan("fit --model qwen3-32b --gpu h100-80gb --gpus 64 --seq 1M --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto fit = nlohmann::json::parse(j.out);
  EXPECT_EQ(fit["smallest_gpus_that_fit"], 4);
  EXPECT_EQ(fit["smallest_gpus_safe"], 8);
  const CliRun four = run_spplan("fit --model qwen3-32b --gpu h100-80gb --gpus 4 --seq 1M");
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_NE(four.out.find(" tokens/s, risky)\n"), std::string::npos) << four.out;
  EXPECT_NE(four.out.find("\nsmallest safe count: 8 GPUs (more than 14.8% of GPU memory free, a 14.8% measured error)\n"),
            std::string::npos)
      << four.out;
  EXPECT_EQ(nlohmann::json::parse(run_spplan("fit --model qwen3-32b --gpu h100-80gb --gpus 4 --seq 1M --risky --json").out)
                ["smallest_gpus_safe"],
            nullptr);  // --risky: not searched
}

// max-seq's answer is an edge (its plan leaves almost nothing free): the longest safe sequence is
// said beside it.
TEST(CliSafeFirst, MaxSeqSaysTheLongestSafeSequence) {
  const CliRun r = run_spplan("max-seq --model qwen3-8b --gpu h100-80gb --gpus 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["group"], "risky");
  ASSERT_TRUE(j["max_seq_safe"].is_number()) << r.out;
  EXPECT_LT(j["max_seq_safe"].get<int64_t>(), j["max_seq"].get<int64_t>());
  EXPECT_GT(j["max_seq_safe"].get<int64_t>(), 0);
  const CliRun text = run_spplan("max-seq --model qwen3-8b --gpu h100-80gb --gpus 8");
  EXPECT_NE(text.out.find("leave more than 14.8% of GPU memory free (a 14.8% measured error); the answer above is "
                          "risky: it may not fit when it runs\n"),
            std::string::npos)
      << text.out;
}

TEST(CliSafeFirst, RentShowsEachOptionsGroup) {
  const CliRun r = run_spplan("rent --model qwen3-4b --seq 128k --nodes 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" group  best knobs\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ngroup: safe leaves more GPU memory free than the largest memory error measured"), std::string::npos)
      << r.out;
  const CliRun j = run_spplan("rent --model qwen3-4b --seq 128k --nodes 1 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto rent = nlohmann::json::parse(j.out);
  EXPECT_EQ(rent["ranking"], "safe_first");
  EXPECT_EQ(rent["options"][0]["best"]["group"], "safe");
}

}  // namespace
