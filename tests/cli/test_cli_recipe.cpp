// The recipe is an input: `--global-batch N` holds for every plan `plan` ranks (its gbatch column,
// its JSON's global_batch) and the plan file and its export carry the accumulation that makes it;
// without it each plan's own global batch is shown and accumulation stays 1.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run_spplan.hpp"

namespace {

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;

const char* kCase = "--model llama-3.1-8b --gpu h100-80gb --gpus 8 --seq 128k ";

TEST(CliRecipe, GlobalBatchHoldsForEveryPlanAndItsExport) {
  const CliRun r = run_spplan(std::string("plan ") + kCase + "--global-batch 16 --top 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto plans = nlohmann::json::parse(r.out)["plans"];
  ASSERT_EQ(plans.size(), 20u);
  for (const auto& p : plans) {
    const auto& k = p["knobs"];
    EXPECT_EQ(k["micro_batch"].get<int>() * k["grad_accum_steps"].get<int>() * p["dp"].get<int>(), 16) << p["knobs"];
    EXPECT_EQ(p["global_batch"], 16);
  }
  const std::string out = testing::TempDir() + "/gb16.toml";
  ASSERT_EQ(run_spplan(std::string("plan ") + kCase + "--global-batch 16 --out " + out).exit_code, 0);
  const CliRun ds = run_spplan("export --plan " + out + " --format deepspeed");
  ASSERT_EQ(ds.exit_code, 0) << ds.err;
  const auto j = nlohmann::json::parse(ds.out);
  const auto& best = plans[0]["knobs"];
  EXPECT_EQ(j["gradient_accumulation_steps"], best["grad_accum_steps"]);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], best["micro_batch"]);
  const CliRun text = run_spplan(std::string("plan ") + kCase + "--global-batch 16");
  EXPECT_NE(text.out.find("\ngbatch: 16 sequences per optimizer step on every plan (--global-batch)\n"), std::string::npos)
      << text.out;
}

TEST(CliRecipe, WithoutItAccumulationStaysOneAndEachGlobalBatchIsShown) {
  const CliRun r = run_spplan(std::string("plan ") + kCase + "--top 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // held: a range over a temporary's member dangles
  for (const auto& p : j["plans"]) {
    EXPECT_EQ(p["knobs"]["grad_accum_steps"], 1);
    EXPECT_EQ(p["global_batch"].get<int>(), p["knobs"]["micro_batch"].get<int>() * p["dp"].get<int>());
  }
  const CliRun text = run_spplan(std::string("plan ") + kCase);
  EXPECT_NE(text.out.find(" gbatch "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ngbatch: sequences per optimizer step, micro batch x accumulation (1, the default) x dp"),
            std::string::npos)
      << text.out;
}

TEST(CliRecipe, AGlobalBatchNoLayoutMakesIsRefusedInOneLine) {
  const CliRun r = run_spplan(std::string("plan ") + kCase + "--global-batch 3 --sp 2 --cp 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "spplan: --global-batch: value 3 is not a multiple of the dp of any layout on 8 GPUs (allowed: a "
                   "multiple of one of dp 4)\n");
  const CliRun zero = run_spplan(std::string("plan ") + kCase + "--global-batch 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err.rfind("spplan: --global-batch: value \"0\"", 0), 0u) << zero.err;
  // Left out, not refused, when some layout makes it: counted under the table.
  const CliRun some = run_spplan(std::string("plan ") + kCase + "--global-batch 3");
  ASSERT_EQ(some.exit_code, 0) << some.err;
  EXPECT_NE(some.out.find(" knob sets left out: their layout's dp does not divide it\n"), std::string::npos) << some.out;
}

}  // namespace
