// Names a user types: the trainer the plan is priced for is named in its header (and said when it
// is the default); flags other tools spell differently are suggested; presets match whatever their
// case, a family name lists its presets; a Hugging Face Hub id maps to its preset or is told what to
// pass, with nothing downloaded.
#include <gtest/gtest.h>

#include <string>

#include "run_spplan.hpp"

namespace {

using spplan::cli_test::CliRun;
using spplan::cli_test::run_spplan;

const std::string kPlan = "plan --model qwen3-4b --gpu h100-80gb --gpus 4 --seq 128k --top 1";

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST(CliNames, ThePlanHeaderNamesTheTrainerAndSaysWhenItIsTheDefault) {
  const CliRun deflt = run_spplan(kPlan), trl = run_spplan(kPlan + " --trainer trl");
  ASSERT_EQ(deflt.exit_code, 0) << deflt.err;
  ASSERT_EQ(trl.exit_code, 0) << trl.err;
  EXPECT_EQ(first_line(deflt.out).rfind("qwen3-4b on 4x h100-80gb at 131072 tokens, trainer arctic (the default; "
                                        "--trainer names yours): ",
                                        0),
            0u)
      << deflt.out;
  EXPECT_EQ(first_line(trl.out).rfind("qwen3-4b on 4x h100-80gb at 131072 tokens, trainer trl: ", 0), 0u) << trl.out;
}

// Each flag another tool names differently: the suggestion, in the unknown-flag line.
TEST(CliNames, FlagsOtherToolsNameAreSuggested) {
  const struct {
    const char* typed;
    const char* suggested;
  } cases[] = {{"--sp-size 4", "--sp"},          {"--ulysses-degree 4", "--sp"},  {"--ulysses_degree 4", "--sp"},
               {"--cp-size 2", "--cp"},          {"--context-parallel-size 2", "--cp"},
               {"--gradient-accumulation-steps 2", "--grad-accum"}, {"--global-batch-size 8", "--global-batch"},
               {"--modle qwen3-4b", "--model"}};  // and a typo, by edit distance
  for (const auto& c : cases) {
    const CliRun r = run_spplan(kPlan + " " + c.typed);
    EXPECT_EQ(r.exit_code, 2) << c.typed;
    const std::string flag = std::string(c.typed).substr(0, std::string(c.typed).find(' '));
    EXPECT_EQ(r.err.rfind("spplan: " + flag + ": unknown flag; did you mean " + c.suggested + "? (allowed: ", 0), 0u)
        << c.typed << ": " << r.err;
  }
}

TEST(CliNames, GpuAndTrainerNamesMatchWhateverTheirCase) {
  for (const char* typed : {"--gpu H100-80GB", "--gpu H100-80gb --trainer TRL"}) {
    const CliRun r = run_spplan("plan --model qwen3-4b --gpus 4 --seq 128k --top 1 " + std::string(typed));
    EXPECT_EQ(r.exit_code, 0) << typed << ": " << r.err;
    EXPECT_NE(first_line(r.out).find(" on 4x h100-80gb "), std::string::npos) << r.out;
  }
  // A model's bare name stays exact (a folder of that name is given as a path): suggested, not mapped.
  const CliRun model = run_spplan("plan --model QWEN3-4B --gpu h100-80gb --gpus 4 --seq 128k");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_EQ(model.err.rfind("spplan: --model: value \"QWEN3-4B\" is not a preset or a file; did you mean \"qwen3-4b\"? (", 0),
            0u)
      << model.err;
  const CliRun family = run_spplan("plan --model qwen3-4b --gpu H100 --gpus 4 --seq 128k");
  EXPECT_EQ(family.exit_code, 2);
  EXPECT_EQ(family.err.rfind("spplan: --gpu: value \"H100\" is not a preset or a file; did you mean \"h100-80gb\"? (the H100 "
                             "presets: h100-80gb, h100-nvl-94gb) (allowed presets: ",
                             0),
            0u)
      << family.err;
}

TEST(CliNames, AHubIdMapsToItsPresetOrSaysWhatToPass) {
  for (const auto& [typed, preset] : {std::pair<std::string, std::string>{"Qwen/Qwen3-8B", "qwen3-8b"},
                                      {"meta-llama/Llama-3.1-8B", "llama-3.1-8b"},
                                      {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"}}) {
    const CliRun r = run_spplan("plan --gpu h100-80gb --gpus 4 --seq 128k --top 1 --model " + typed);
    EXPECT_EQ(r.exit_code, 0) << typed << ": " << r.err;
    EXPECT_EQ(first_line(r.out).rfind(preset + " on 4x h100-80gb", 0), 0u) << typed << ": " << r.out;
  }
  const CliRun unknown = run_spplan("plan --gpu h100-80gb --gpus 4 --seq 128k --model some-org/Some-Model-7B");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "spplan: --model: value \"some-org/Some-Model-7B\" is a Hugging Face Hub id, not a preset or a file here, and "
            "nothing is downloaded (allowed: its config.json or the model folder holding it, e.g. after huggingface-cli "
            "download some-org/Some-Model-7B config.json --local-dir DIR)\n");
}

}  // namespace
