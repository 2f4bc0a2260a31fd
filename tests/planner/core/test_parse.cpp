#include "planner/core/parse.hpp"

#include <gtest/gtest.h>

namespace spplan {
namespace {

TEST(ParseSeqLen, AcceptsPlainAndSuffixedLengths) {
  EXPECT_EQ(*parse_seq_len("--seq", "131072"), 131072);
  EXPECT_EQ(*parse_seq_len("--seq", "128k"), 131072);
  EXPECT_EQ(*parse_seq_len("--seq", "128K"), 131072);
  EXPECT_EQ(*parse_seq_len("--seq", "1.5M"), 1572864);
  EXPECT_EQ(*parse_seq_len("--seq", "2m"), 2097152);
  // Decimal counts as papers write them (ALST's "15M" is 15,000,000 tokens), plain or scientific.
  EXPECT_EQ(*parse_seq_len("--seq", "15000000"), 15000000);
  EXPECT_EQ(*parse_seq_len("--seq", "1.5e7"), 15000000);
  EXPECT_EQ(*parse_seq_len("--seq", "1E6"), 1000000);
}

TEST(ParseSeqLen, RejectsWithOneLineNamingFlagValueAndAllowed) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"", "--seq: empty value (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"12x", "--seq: value \"12x\" is not a sequence length (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"-5", "--seq: value \"-5\" is not a whole positive number of tokens (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"1.3", "--seq: value \"1.3\" is not a whole positive number of tokens (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"1000000000001", "--seq: value \"1000000000001\" is too long (allowed: at most 1000000000000 tokens)"},
      // An exponent is a decimal count and takes no binary suffix.
      {"1e3k", "--seq: value \"1e3k\" is not a sequence length (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"1.5e-3", "--seq: value \"1.5e-3\" is not a whole positive number of tokens (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"1e400", "--seq: value \"1e400\" is not a sequence length (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
      {"1\n2", "--seq: value \"1\\x0a2\" is not a sequence length (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))"},
  };
  for (const auto& c : cases) {
    const auto r = parse_seq_len("--seq", c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().message(), c.expected);
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidInput);
  }
}

TEST(DurationText, ReadsAsAPersonReadsIt) {
  EXPECT_EQ(duration_text(0.4234), "0.42 s");
  EXPECT_EQ(duration_text(28.14), "28.1 s");
  EXPECT_EQ(duration_text(725), "12 min 5 s");
  EXPECT_EQ(duration_text(28149.939), "7 h 49 min");  // a step the GUI once showed as "28149.939"
  EXPECT_EQ(duration_text(3 * 86400 + 4 * 3600 + 100), "3 d 4 h");
  EXPECT_EQ(duration_text(-1), "-");
}

// The counts and lengths the CLI's tables and the GUI's print alike.
TEST(CountAndSeqText, SeparatorsAndTheSeqSuffixes) {
  EXPECT_EQ(count_text(6332.4), "6,332");
  EXPECT_EQ(count_text(1234567), "1,234,567");
  EXPECT_EQ(count_text(999), "999");
  EXPECT_EQ(count_text(-12716), "-12,716");
  EXPECT_EQ(seq_text(18723840), "17.9M");
  EXPECT_EQ(seq_text(131072), "128K");
  EXPECT_EQ(seq_text(1000), "1000");
}

TEST(ParseInt, EnforcesRange) {
  EXPECT_EQ(*parse_int("--zero", "3", 0, 3), 3);
  EXPECT_EQ(parse_int("--zero", "4", 0, 3).status().message(),
            "--zero: value \"4\" is not allowed (allowed: a whole number from 0 to 3)");
  EXPECT_FALSE(parse_int("--zero", "2.5", 0, 3).ok());
}

TEST(ParseDouble, EnforcesAFiniteRange) {
  EXPECT_EQ(*parse_double("--reduce-bucket", "5e8", 1.0), 5e8);
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"nan", "--reduce-bucket: value \"nan\" is not allowed (allowed: a number from 1 to 1e+15)"},
      {"1e300", "--reduce-bucket: value \"1e300\" is not allowed (allowed: a number from 1 to 1e+15)"},
      {"0.5", "--reduce-bucket: value \"0.5\" is not allowed (allowed: a number from 1 to 1e+15)"},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_double("--reduce-bucket", c.text, 1.0).status().message(), c.expected);
}

// Numbers beyond their type, NaN, infinities and negative zero: refused with the one-line message
// or read as the value they are, never converted out of range (that is undefined behaviour).
TEST(ParseInt, NumbersBeyondTheTypeAreRefusedBeforeConverting) {
  for (const char* text : {"1e28", "9223372036854775808", "-9223372036854775809", "99999999999999999999", "nan",
                           "inf", "-inf", "4.0", "0x10", " 4", "4 "}) {
    const auto r = parse_int("--gpus", text, 1, 1 << 20);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message(), std::string("--gpus: value \"") + text +
                                        "\" is not allowed (allowed: a whole number from 1 to 1048576)");
  }
  EXPECT_EQ(*parse_int("--zero", "-0", 0, 3), 0);  // negative zero is zero
}

TEST(ParseSeqLen, NanInfinityAndNegativeZeroAreRefused) {
  const std::string allowed =
      " (allowed: a positive token count: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2))";
  const struct {
    const char* text;
    std::string expected;
  } cases[] = {
      {"nan", "--seq: value \"nan\" is not a sequence length" + allowed},
      {"infk", "--seq: value \"infk\" is not a sequence length" + allowed},
      {"-inf", "--seq: value \"-inf\" is not a sequence length" + allowed},
      {"-0", "--seq: value \"-0\" is not a whole positive number of tokens" + allowed},
      {"-0.0M", "--seq: value \"-0.0M\" is not a whole positive number of tokens" + allowed},
      {"10000000000000000000000000000", "--seq: value \"10000000000000000000000000000\" is too long (allowed: at most 1000000000000 tokens)"},
      {"1e28", "--seq: value \"1e28\" is too long (allowed: at most 1000000000000 tokens)"},  // a decimal count
      {"9223372036854775808", "--seq: value \"9223372036854775808\" is too long (allowed: at most 1000000000000 tokens)"},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_seq_len("--seq", c.text).status().message(), c.expected) << c.text;
}

TEST(ParseDouble, InfinitiesAndNegativeZero) {
  for (const char* text : {"inf", "-inf", "infinity", "1e400", "-1e400"}) {
    EXPECT_EQ(parse_double("--lr", text, 0.0, 1.0).status().message(),
              std::string("--lr: value \"") + text + "\" is not allowed (allowed: a number from 0 to 1)");
  }
  EXPECT_EQ(*parse_double("--min-lr", "-0", 0.0, 1.0), 0.0);  // -0 == 0: inside [0, 1]
}

TEST(Printable, ShowsControlCharactersAsHex) {
  EXPECT_EQ(printable("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(printable("plain ü"), "plain ü");
}

TEST(ParseChoice, ListsAllowedValues) {
  EXPECT_EQ(*parse_choice("--act-ckpt", "full", {"none", "full", "offload"}), 1u);
  EXPECT_EQ(parse_choice("--act-ckpt", "some", {"none", "full", "offload"}).status().message(),
            "--act-ckpt: value \"some\" is not allowed (allowed: none, full, offload)");
}

// split is join's inverse, empty items included; separators longer than one character work too.
TEST(Split, IsJoinsInverseAndKeepsEmptyItems) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("a,b,,c", ","), (V{"a", "b", "", "c"}));
  EXPECT_EQ(split("", ","), (V{""}));
  EXPECT_EQ(split("a,", ","), (V{"a", ""}));
  EXPECT_EQ(split("none, cpu, nvme", ", "), (V{"none", "cpu", "nvme"}));
  EXPECT_EQ(split("gather.m0.rec.L30", "."), (V{"gather", "m0", "rec", "L30"}));
  for (const V& items : {V{"x"}, V{"a", "", "b"}, V{"", ""}}) EXPECT_EQ(split(join(items, ","), ","), items);
}

}  // namespace
}  // namespace spplan
