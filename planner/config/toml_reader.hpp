// KeyReader: typed, range-checked reads of one TOML table that remembers which keys were read,
// so that any key left over is reported by name. Messages follow STYLE.md:
//   configs/gpus/x.toml: key "memory_gib": value -3 is not allowed (allowed: a number > 0)
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "planner/core/status.hpp"

namespace spplan {

class KeyReader {
 public:
  // `file` names the source in messages; `prefix` is the table path ("knobs.") or empty.
  KeyReader(std::string file, const toml::table& table, std::string prefix = "");

  // Each read: absent and not required -> leaves *out unchanged, returns ok.
  Status read_int(std::string_view key, int64_t* out, bool required, int64_t min, int64_t max);
  // A number in [kMinPositive, kMaxNumber]: sizes and rates, which the costmodel multiplies and
  // divides by.
  Status read_positive(std::string_view key, double* out, bool required);
  // A number in [0, kMaxNumber]: costs and overheads that may be zero but never negative.
  Status read_nonnegative(std::string_view key, double* out, bool required);
  // A number in [min, max] (an optimizer's beta, a probability).
  Status read_bounded(std::string_view key, double* out, bool required, double min, double max);
  Status read_bool(std::string_view key, bool* out, bool required);
  Status read_string(std::string_view key, std::string* out, bool required);
  // A string that must be one of `allowed`; *index receives its position.
  Status read_choice(std::string_view key, size_t* index, bool required, const std::vector<std::string>& allowed);

  bool has(std::string_view key) const { return table_.contains(key); }
  // Accepts `key` (read elsewhere, e.g. a sub-table) and lists it among the allowed keys.
  void mark_read(std::string_view key);
  // Error naming the first key that was never read (allowed keys listed).
  Status check_no_unknown_keys() const;

  std::string where(std::string_view key) const;  // `file: key "prefix.key"`

 private:
  Status missing(std::string_view key) const;
  void note_known(std::string_view key);
  std::string file_;
  const toml::table& table_;
  std::string prefix_;
  std::set<std::string> read_;
  std::vector<std::string> known_;  // every key a read_* asked for, for the "allowed" list
};

// "36", "\"qwen3\"", "(a table)": a TOML value as messages show it.
std::string describe(const toml::node& node);

// Parses a TOML file; a syntax error becomes "file:line:col: message". Files over 1 MiB and keys
// nested absurdly deep are refused before parsing (toml++ recurses once per dotted key part).
Result<toml::table> parse_toml_file(const std::string& path);

}  // namespace spplan
