// Pickles built byte by byte for the tests, without Python: each function returns the opcodes that
// push one value, as pickle protocol 4 writes them (Python's Lib/pickletools.py names the opcodes).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spplan::check::pickle_bytes {

inline std::string le(uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}
// PROTO 4, the value, STOP.
inline std::string whole(const std::string& value) { return std::string("\x80\x04", 2) + value + "."; }
inline std::string str(const std::string& s) { return "\x8c" + le(s.size(), 1) + s; }  // SHORT_BINUNICODE
inline std::string integer(int32_t v) { return "J" + le(static_cast<uint32_t>(v), 4); }  // BININT
// EMPTY_LIST, MARK, the items, APPENDS.
inline std::string list(const std::vector<std::string>& items) {
  std::string out = "](";
  for (const std::string& i : items) out += i;
  return out + "e";
}
// EMPTY_DICT, MARK, key and value pairs (str keys), SETITEMS.
inline std::string dict(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "}(";
  for (const auto& [k, v] : items) out += str(k) + v;
  return out + "u";
}

}  // namespace spplan::check::pickle_bytes
