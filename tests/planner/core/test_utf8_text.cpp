#include "planner/core/utf8_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace spplan {
namespace {

// Each case: bytes in, what utf8_text makes of them. The well-formed ones come back as they are;
// every other byte is written as \xNN and the bytes after it are read afresh.
TEST(Utf8Text, KeepsWellFormedTextAndShowsEveryOtherByte) {
  const struct {
    std::string in, out;
  } cases[] = {
      {"", ""},
      {"qwen3-8b", "qwen3-8b"},
      {"mod\xc3\xa8le", "mod\xc3\xa8le"},                    // è in UTF-8
      {"\xe6\xa8\xa1\xe5\x9e\x8b", "\xe6\xa8\xa1\xe5\x9e\x8b"},  // 模型
      {"\xf0\x9f\x99\x82", "\xf0\x9f\x99\x82"},              // U+1F642, four bytes
      {"mod\xe8le", "mod\\xe8le"},                           // è in Latin-1
      {"\xe8", "\\xe8"},
      {"\xc3", "\\xc3"},                                     // a sequence cut at the end
      {"\xe6\xa8", "\\xe6\\xa8"},
      {"\xc0\xaf", "\\xc0\\xaf"},                            // an overlong "/"
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},                   // overlong in three bytes
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                   // a surrogate, U+D800
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},          // past U+10FFFF
      {"\xff\xfe", "\\xff\\xfe"},
      {"\x80" "a", "\\x80a"},                                // a continuation byte alone
      {"\xe8\xc3\xa8", "\\xe8\xc3\xa8"},                     // a stray byte, then a whole è
  };
  for (const auto& c : cases) {
    EXPECT_EQ(utf8_text(c.in), c.out) << testing::PrintToString(c.in);
    EXPECT_EQ(is_utf8(c.in), c.in == c.out) << testing::PrintToString(c.in);
    EXPECT_TRUE(is_utf8(utf8_text(c.in))) << testing::PrintToString(c.in);
  }
}

// is_utf8 agrees with the reader that throws: nlohmann's dump() (type_error 316) takes exactly
// the strings is_utf8 accepts, for every one- and two-byte string and, after the lead bytes of
// three- and four-byte sequences, a sample of third bytes.
TEST(Utf8Text, AgreesWithNlohmannDump) {
  const auto dumps = [](const std::string& s) {
    try {
      (void)nlohmann::json(s).dump();
      return true;
    } catch (const nlohmann::json::type_error&) {
      return false;
    }
  };
  for (int a = 0; a < 256; ++a) {
    const std::string one(1, static_cast<char>(a));
    ASSERT_EQ(is_utf8(one), dumps(one)) << a;
    for (int b = 0; b < 256; ++b) {
      const std::string two{static_cast<char>(a), static_cast<char>(b)};
      ASSERT_EQ(is_utf8(two), dumps(two)) << a << " " << b;
      if (a < 0xe0 || a > 0xf4) continue;
      for (const int c : {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff}) {
        const std::string three = two + static_cast<char>(c);
        ASSERT_EQ(is_utf8(three), dumps(three)) << a << " " << b << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace spplan
