// "Did you mean" (planner/core/suggest.hpp): the distance, and which names are close enough.
#include "planner/core/suggest.hpp"

#include <gtest/gtest.h>

#include "planner/core/args.hpp"

namespace spplan {
namespace {

TEST(EditDistance, CountsEditsAndSwapsIgnoringCase) {
  EXPECT_EQ(edit_distance("plan", "plan"), 0u);
  EXPECT_EQ(edit_distance("plna", "plan"), 1u);   // a swap of neighbours is one edit
  EXPECT_EQ(edit_distance("PLAN", "plan"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("--modle", "--model"), 1u);
}

TEST(ClosestName, SuggestsOnlyAClearTypo) {
  const std::vector<std::string> presets{"qwen3-4b", "qwen3-8b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b"};
  EXPECT_EQ(closest_name("qwen3-4", presets), "qwen3-4b");
  EXPECT_EQ(closest_name("lama-3.1-8b", presets), "llama-3.1-8b");
  EXPECT_EQ(closest_name("mistral", presets), "mistral-7b");  // a prefix of one name only
  EXPECT_EQ(closest_name("qwen3", presets), std::nullopt);    // a prefix of two: no guess
  EXPECT_EQ(closest_name("gpt-4", presets), std::nullopt);    // nothing close
  EXPECT_EQ(closest_name("qwen3-4b", presets), std::nullopt); // known: nothing mistyped
  EXPECT_EQ(closest_name("qwen3-6b", presets), std::nullopt); // 4b and 8b tie
  EXPECT_EQ(closest_name("", presets), std::nullopt);
}

TEST(DidYouMean, UnknownFlagNamesTheClosestFlag) {
  const std::vector<FlagSpec> specs{{"model"}, {"gpus"}, {"seq"}};
  const char* argv[] = {"spplan", "--modle", "x"};
  EXPECT_EQ(Args::parse(3, argv, 1, specs).status().message(),
            "--modle: unknown flag; did you mean --model? (allowed: --model, --gpus, --seq)");
  const char* far[] = {"spplan", "--bogus", "x"};
  EXPECT_EQ(Args::parse(3, far, 1, specs).status().message(), "--bogus: unknown flag (allowed: --model, --gpus, --seq)");
}

}  // namespace
}  // namespace spplan
