#include "planner/search/knob_constraints.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "planner/config/loaders.hpp"
#include "planner/config/stack_flags.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::search {
namespace {

// The searching commands' reading of `words` (knob and stack flags) for llama-3.1-8b on `gpus`
// H100s at 256K tokens on `trainer`, as cmd_plan.cpp reads them.
Result<KnobConstraints> constraints_of(const std::string& trainer, int64_t gpus, const std::vector<std::string>& words,
                                       const char* model = "llama-3.1-8b", bool gpus_vary = false) {
  std::vector<FlagSpec> specs = searched_knob_flag_specs();
  for (const FlagSpec& f : stack_flag_specs()) specs.push_back(f);
  const Result<Args> args = Args::parse(words, specs);
  EXPECT_TRUE(args.ok()) << args.status().message();
  PlanSpec base;
  base.model = *load_model(model);
  base.cluster.gpu = *load_gpu("h100-80gb");
  base.cluster.num_gpus = gpus;
  base.seq_len = 262144;
  base.stack = *load_trainer(trainer);
  SPPLAN_RETURN_IF_ERROR(apply_stack_flags(*args, &base.stack));
  return read_constraints(*args, &base, gpus_vary);
}

const std::string kHfRingKernel =
    "--attention: value \"flash2\" with layout ring is not run by trainer \"hf\" (torch's context_parallel runs "
    "scaled_dot_product_attention only, and the Trainer refuses another attn_implementation under cp; allowed: sdpa)";

// A kernel the trainer refuses on the one layout the pins leave is said as the kernel's line, not
// as the most frequent other refusal the search meets there (ZeRO 0 on hf's ring).
TEST(KnobConstraints, NamesAKernelRefusedOnEveryPinnedLayout) {
  const auto ring = constraints_of("hf", 4, {"--attention", "flash2", "--cp", "4"});
  ASSERT_FALSE(ring.ok());
  EXPECT_EQ(ring.status().message(), kHfRingKernel);
  // Pins on knobs the rule does not test change nothing: it holds whatever they are.
  const auto pinned = constraints_of("hf", 4, {"--attention", "flash2", "--cp", "4", "--zero", "3", "--act-ckpt", "full"});
  ASSERT_FALSE(pinned.ok());
  EXPECT_EQ(pinned.status().message(), kHfRingKernel);
  // --sp 1 leaves the ring (cp 2, 4) and the layout none (cp 1), which runs flash2: the search looks.
  EXPECT_TRUE(constraints_of("hf", 4, {"--attention", "flash2", "--sp", "1"}).ok());
}

// A layout left open that runs the kernel leaves it to the search; an unnamed kernel follows each
// layout (SDPA on the ring) and is never refused here.
TEST(KnobConstraints, LeavesAKernelSomeLayoutRuns) {
  EXPECT_TRUE(constraints_of("hf", 4, {"--attention", "flash2"}).ok());
  EXPECT_TRUE(constraints_of("hf", 4, {"--attention", "sdpa", "--cp", "4"}).ok());
  EXPECT_TRUE(constraints_of("hf", 4, {"--cp", "4"}).ok());
}

// A refusal on the kernel alone holds on every layout: the engine refuses FlashAttention 3 (its
// LibTorch SDPA has none) and runs FlashAttention 2.
TEST(KnobConstraints, ARefusalOnTheKernelAloneHoldsEverywhere) {
  const auto engine = constraints_of("engine", 4, {"--attention", "flash3"});
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().message().rfind("--attention: value \"flash3\" is not run by trainer \"engine\" (", 0), 0u)
      << engine.status().message();
  EXPECT_NE(engine.status().message().find("allowed: flash2, sdpa)"), std::string::npos) << engine.status().message();
  EXPECT_TRUE(constraints_of("engine", 4, {"--attention", "flash2"}).ok());
}

// A refusal on the kernel and a knob the search varies holds for some knob sets only: the search
// looks, unless a flag fixes that knob to a refused value.
TEST(KnobConstraints, ARefusalOnASearchedKnobHoldsOnlyWhenPinned) {
  static const testing_scratch::ScratchDir dir("knob_constraints");
  const std::string record = dir.path() + "/hf-zero3-flash.toml";
  std::ofstream(record) << "name = \"hf-zero3-flash\"\nbase = \"hf\"\n[[refuse]]\n"
                           "when = { layout = \"ulysses\", attention = \"flash2\", zero_stage = [0, 1, 2] }\n"
                           "why = \"w\"\n";
  EXPECT_TRUE(constraints_of(record, 4, {"--attention", "flash2", "--sp", "4"}).ok());
  EXPECT_TRUE(constraints_of(record, 4, {"--attention", "flash2", "--sp", "4", "--zero", "3"}).ok());
  const auto pinned = constraints_of(record, 4, {"--attention", "flash2", "--sp", "4", "--zero", "2"});
  ASSERT_FALSE(pinned.ok());
  EXPECT_EQ(pinned.status().message().rfind("--attention: value \"flash2\" with ", 0), 0u) << pinned.status().message();
  EXPECT_NE(pinned.status().message().find("(w; allowed: sdpa, flash3)"), std::string::npos) << pinned.status().message();
}

// A refusal of the model alone holds on every knob set: its line, not the most frequent of the
// search's causes (the Ulysses layouts axolotl does not run, most of the pairs on 16 GPUs).
TEST(KnobConstraints, NamesARefusalOfTheModelBeforeTheSearch) {
  const auto mixture = constraints_of("axolotl", 16, {}, "mixtral-8x7b");
  ASSERT_FALSE(mixture.ok());
  EXPECT_EQ(mixture.status().message().rfind("--model: value \"mixtral-8x7b\" (8 experts) is not run by trainer \"axolotl\" (", 0),
            0u)
      << mixture.status().message();
  EXPECT_TRUE(constraints_of("engine", 16, {}, "mixtral-8x7b").ok());
}

// A kernel nobody named is the model's (gpt-oss's sinks train on flex alone): said by its plan key
// and why, and what is allowed is another model or trainer, not a kernel the sinks refuse.
TEST(KnobConstraints, AKernelTheModelImposesIsSaidAsTheModels) {
  const auto sinks = constraints_of("arctic", 8, {}, "gpt-oss-20b");
  ASSERT_FALSE(sinks.ok());
  const std::string& m = sinks.status().message();
  EXPECT_EQ(m.rfind("attention: value \"flex\" (the kernel gpt-oss-20b's attention sinks train on: attention_sinks) is "
                    "not run by trainer \"arctic\" (",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("; allowed: a model without attention sinks, or the trainer hf at sp 1 with flex)"), std::string::npos) << m;
  const auto named = constraints_of("arctic", 8, {"--attention", "flex"}, "gpt-oss-20b");
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().message().rfind("--attention: value \"flex\" is not run by trainer \"arctic\" (", 0), 0u)
      << named.status().message();
}

// The trainer runs it, but no format launches it whatever the search varies: a kernel megatron's
// script does not write, a split ms-swift's sequence_parallel_size does not make.
TEST(KnobConstraints, NamesWhatNoFormatLaunches) {
  const auto megatron = constraints_of("megatron", 8, {"--attention", "flash2"});
  ASSERT_FALSE(megatron.ok());
  EXPECT_EQ(megatron.status().message().rfind("no format of trainer \"megatron\" launches what the flags ask: --attention: "
                                              "value \"flash2\" cannot be expressed for --format megatron (",
                                              0),
            0u)
      << megatron.status().message();
  EXPECT_NE(megatron.status().message().find("; allowed: sdpa)"), std::string::npos) << megatron.status().message();
  EXPECT_TRUE(constraints_of("megatron", 8, {"--attention", "sdpa"}).ok());
  const auto swift = constraints_of("usp", 8, {"--sp", "1", "--cp", "8"});
  ASSERT_FALSE(swift.ok());
  EXPECT_EQ(swift.status().message(),
            "no format of trainer \"usp\" launches what the flags ask: --sp: value 1 with cp 8 cannot be expressed for "
            "--format swift (it takes 8 sequence-parallel ranks and runs Ulysses over gcd(8 key-value heads, 8) = 8 of "
            "them, a ring over the rest; allowed: sp 8, cp 1)");
  // cp 2 on 16 GPUs leaves sp 1 to 8, and gcd(8, 8 x 2) = 8 is sp 8's split: the search looks.
  EXPECT_TRUE(constraints_of("usp", 16, {"--cp", "2"}).ok());
}

// Where the GPU count varies (rent), the layouts at base's count are not all the search tries: a
// refusal on a layout is left to it; one on the kernel or the model alone still holds.
TEST(KnobConstraints, ALayoutRuleWaitsWhenTheGpuCountVaries) {
  static const testing_scratch::ScratchDir dir("knob_constraints_rent");
  const std::string record = dir.path() + "/hf-no-single.toml";
  std::ofstream(record) << "name = \"hf-no-single\"\nbase = \"hf\"\n[[refuse]]\n"
                           "when = { layout = \"none\", attention = \"flash2\" }\nwhy = \"w\"\n";
  EXPECT_FALSE(constraints_of(record, 1, {"--attention", "flash2"}).ok());
  EXPECT_TRUE(constraints_of(record, 1, {"--attention", "flash2"}, "llama-3.1-8b", /*gpus_vary=*/true).ok());
  EXPECT_FALSE(constraints_of("engine", 1, {"--attention", "flash3"}, "llama-3.1-8b", /*gpus_vary=*/true).ok());
  EXPECT_FALSE(constraints_of("axolotl", 1, {}, "mixtral-8x7b", /*gpus_vary=*/true).ok());
  // A pinned ring is checked against the counts rent tries, not its one GPU: a trainer that runs a
  // ring takes it; one that runs neither a ring nor Ulysses x ring says so.
  EXPECT_TRUE(constraints_of("hf", 1, {"--cp", "2"}, "llama-3.1-8b", /*gpus_vary=*/true).ok());
  const auto arctic = constraints_of("arctic", 1, {"--cp", "2"}, "llama-3.1-8b", /*gpus_vary=*/true);
  ASSERT_FALSE(arctic.ok());
  EXPECT_EQ(arctic.status().message().rfind("--cp: value 2 makes the layout ring (sp 1, cp 2), which trainer \"arctic\" "
                                            "does not run",
                                            0),
            0u)
      << arctic.status().message();
}

}  // namespace
}  // namespace spplan::search
