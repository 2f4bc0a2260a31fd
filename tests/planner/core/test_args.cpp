#include "planner/core/args.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spplan {
namespace {

const std::vector<FlagSpec> kSpecs{{"seq"}, {"json", false}};

TEST(Args, ParsesValuesBooleansAndPositionals) {
  const char* argv[] = {"estimate", "--seq", "128k", "--json", "extra"};
  auto args = Args::parse(5, argv, 1, kSpecs);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args->get("seq"), "128k");
  EXPECT_TRUE(args->has("json"));
  EXPECT_EQ(args->positional(), std::vector<std::string>{"extra"});
}

// Flags built in code (the GUI's fields and pins) read as typed ones: every word is a flag or a
// value, and the same words give the same errors.
TEST(Args, WordsParseAsTheCommandLine) {
  auto args = Args::parse(std::vector<std::string>{"--seq", "128k", "--json"}, kSpecs);
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args->get("seq"), "128k");
  EXPECT_TRUE(args->has("json"));
  EXPECT_TRUE(args->positional().empty());
  EXPECT_TRUE(Args::parse(std::vector<std::string>{}, kSpecs).ok());
  const char* argv[] = {"x", "--sq", "1"};
  EXPECT_EQ(Args::parse(std::vector<std::string>{"--sq", "1"}, kSpecs).status().message(),
            Args::parse(3, argv, 1, kSpecs).status().message());
}

TEST(Args, AcceptsEqualsForm) {
  const char* argv[] = {"x", "--seq=4k"};
  EXPECT_EQ(*Args::parse(2, argv, 1, kSpecs)->get("seq"), "4k");
  const char* dashes[] = {"x", "--seq=--4k"};
  EXPECT_EQ(*Args::parse(2, dashes, 1, kSpecs)->get("seq"), "--4k");
}

TEST(Args, RejectsUnknownRepeatedAndMissingValues) {
  const struct {
    std::vector<const char*> argv;
    const char* expected;
  } cases[] = {
      {{"x", "--sq", "1"}, "--sq: unknown flag; did you mean --seq? (allowed: --seq, --json)"},
      {{"x", "--seq", "1", "--seq", "2"}, "--seq: given twice (allowed: once)"},
      {{"x", "--seq"}, "--seq: missing value"},
      // `--out --json` must not write a file named "--json"; --seq=--x still passes such a value.
      {{"x", "--seq", "--json"}, "--seq: missing value, found the flag \"--json\" (allowed: --seq VALUE or --seq=VALUE)"},
      {{"x", "--json=yes"}, "--json: takes no value, found \"yes\""},
  };
  for (const auto& c : cases) {
    auto args = Args::parse(static_cast<int>(c.argv.size()), c.argv.data(), 1, kSpecs);
    ASSERT_FALSE(args.ok());
    EXPECT_EQ(args.status().message(), c.expected);
  }
}

// A switch and its opposite (FlagSpec::opposite) together: refused, whichever comes first; each
// alone is read.
TEST(Args, RefusesASwitchWithItsOpposite) {
  const std::vector<FlagSpec> specs{{"tiled-mlp", false, "", "", "", "no-tiled-mlp"}, {"no-tiled-mlp", false}};
  for (const std::vector<std::string>& words : {std::vector<std::string>{"--tiled-mlp", "--no-tiled-mlp"},
                                                std::vector<std::string>{"--no-tiled-mlp", "--tiled-mlp"}}) {
    EXPECT_EQ(Args::parse(words, specs).status().message(),
              "--no-tiled-mlp: not allowed with --tiled-mlp (allowed: one of them)");
  }
  EXPECT_TRUE(Args::parse(std::vector<std::string>{"--tiled-mlp"}, specs).ok());
  EXPECT_TRUE(Args::parse(std::vector<std::string>{"--no-tiled-mlp"}, specs).ok());
}

}  // namespace
}  // namespace spplan
