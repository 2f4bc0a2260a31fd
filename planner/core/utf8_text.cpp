#include "planner/core/utf8_text.hpp"

#include <cstdio>

namespace spplan {
namespace {

bool in(unsigned char byte, unsigned char low, unsigned char high) { return byte >= low && byte <= high; }

// The length of the well-formed UTF-8 sequence starting at text[at], or 0 when the byte there
// does not start one. The second byte's range depends on the first (Unicode 15, table 3-7); that
// is what keeps out overlong forms (C0, E0 80), surrogates (ED A0) and code points past U+10FFFF.
size_t sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0; };
  const unsigned char first = byte(0);
  if (first < 0x80) return 1;
  unsigned char low = 0x80, high = 0xbf;
  size_t length = 0;
  if (in(first, 0xc2, 0xdf)) {
    length = 2;
  } else if (in(first, 0xe0, 0xef)) {
    length = 3;
    if (first == 0xe0) low = 0xa0;
    if (first == 0xed) high = 0x9f;
  } else if (in(first, 0xf0, 0xf4)) {
    length = 4;
    if (first == 0xf0) low = 0x90;
    if (first == 0xf4) high = 0x8f;
  } else {
    return 0;  // a continuation byte, C0, C1 or F5..FF
  }
  if (!in(byte(1), low, high)) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!in(byte(i), 0x80, 0xbf)) return 0;
  }
  return length;
}

}  // namespace

bool is_utf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const size_t length = sequence_length(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string utf8_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t length = sequence_length(text, at);
    if (length > 0) {
      out.append(text.substr(at, length));
      at += length;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[at]));
    out += escaped;
    ++at;  // the next byte may start a sequence of its own
  }
  return out;
}

}  // namespace spplan
