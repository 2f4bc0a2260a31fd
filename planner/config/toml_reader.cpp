#include "planner/config/toml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"

namespace spplan {
namespace {

// spplan's files are a few KiB; a larger "config" is some other file passed by mistake.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;
// toml++ recurses once per part of a dotted key or table header and overflows the stack near
// 30000 parts; spplan's tables are flat, so a few hundred dots on one line is never a real file.
constexpr int kMaxDotsPerLine = 256;

// Counts '.' outside strings and comments, line by line; fails on the first line with too many.
Status check_key_depth(const std::string& path, const std::string& text) {
  int line = 1, dots = 0;
  char quote = 0;  // the quote that opened the current string; 0 outside strings
  bool comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line, dots = 0, comment = false;
    } else if (comment) {
      continue;
    } else if (quote != 0) {
      if (c == '\\' && quote == '"') ++i;  // skip the escaped character
      else if (c == quote) quote = 0;
    } else if (c == '#') {
      comment = true;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '.' && ++dots > kMaxDotsPerLine) {
      return Status::invalid(path + ":" + std::to_string(line) + ": more than " + std::to_string(kMaxDotsPerLine) +
                             " dots outside strings (allowed: keys nested at most " +
                             std::to_string(kMaxDotsPerLine) + " levels deep)");
    }
  }
  return Status::ok();
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions, which is how keys
// are usually mistyped: "modle"); keys are short, so the O(n*m) table is nothing.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// A typo, not another word: about one edit per four characters of the allowed key.
bool is_close(std::string_view typed, std::string_view allowed) {
  return edit_distance(typed, allowed) <= std::max<size_t>(1, allowed.size() / 4);
}

Result<std::string> read_config_text(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxConfigBytes) {
    return Status::invalid(path + ": file is " + std::to_string(size) + " bytes (allowed: a config file of at most " +
                           std::to_string(kMaxConfigBytes) + " bytes)");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string describe(const toml::node& node) {
  std::ostringstream out;
  if (node.is_string()) {
    out << '"' << printable(node.value_or(std::string())) << '"';
  } else if (node.is_table()) {
    out << "(a table)";
  } else if (node.is_array()) {
    out << "(an array)";
  } else if (node.is_floating_point()) {
    // toml++ prints every binary digit (-0.90000000000000002); keep ".0" so 36.0 reads as a float.
    const std::string text = format_number(*node.value<double>());
    out << text << (text.find_first_of(".eni") == std::string::npos ? ".0" : "");
  } else {
    node.visit([&out](auto&& value) { out << value; });
  }
  return out.str();
}

KeyReader::KeyReader(std::string file, const toml::table& table, std::string prefix)
    : file_(std::move(file)), table_(table), prefix_(std::move(prefix)) {}

std::string KeyReader::where(std::string_view key) const {
  return file_ + ": key \"" + prefix_ + std::string(key) + "\"";
}

Status KeyReader::missing(std::string_view key) const {
  // A required key is often missing because it was mistyped ("num_hiden_layers"): name the typo,
  // which is what the user has to fix, rather than the key they believe they wrote.
  for (auto&& [typed, node] : table_) {
    const std::string name(typed.str());
    const bool asked = std::find(known_.begin(), known_.end(), name) != known_.end();
    if (!asked && is_close(name, key)) {
      return Status::invalid(where(name) + ": unknown key (closest allowed: \"" + std::string(key) +
                             "\", which is required and missing)");
    }
  }
  return Status::invalid(where(key) + ": missing (required)");
}

void KeyReader::note_known(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

void KeyReader::mark_read(std::string_view key) {
  note_known(key);
  read_.insert(std::string(key));
}

Status KeyReader::read_int(std::string_view key, int64_t* out, bool required, int64_t min, int64_t max) {
  note_known(key);
  const toml::node* node = table_.get(key);
  if (!node) return required ? missing(key) : Status::ok();
  read_.insert(std::string(key));
  // Only an integer node is read as one: toml++'s value<int64_t>() converts a float first, and a
  // float beyond int64_t's range (1e28) makes that conversion undefined (found by fuzz_model_toml).
  const toml::value<int64_t>* integer = node->as_integer();
  if (integer == nullptr || integer->get() < min || integer->get() > max) {
    return Status::invalid(where(key) + ": value " + describe(*node) + " is not allowed (allowed: a whole number from " +
                           std::to_string(min) + " to " + std::to_string(max) + ")");
  }
  *out = integer->get();
  return Status::ok();
}

Status KeyReader::read_positive(std::string_view key, double* out, bool required) {
  return read_bounded(key, out, required, kMinPositive, kMaxNumber);
}

Status KeyReader::read_nonnegative(std::string_view key, double* out, bool required) {
  return read_bounded(key, out, required, 0.0, kMaxNumber);
}

Status KeyReader::read_bounded(std::string_view key, double* out, bool required, double min, double max) {
  note_known(key);
  const toml::node* node = table_.get(key);
  if (!node) return required ? missing(key) : Status::ok();
  read_.insert(std::string(key));
  const auto value = node->value<double>();  // integers convert
  if (!node->is_number() || !value || !(*value >= min && *value <= max)) {  // NaN fails too
    return Status::invalid(where(key) + ": value " + describe(*node) + " is not allowed (allowed: a number from " +
                           format_number(min) + " to " + format_number(max) + ")");
  }
  *out = *value;
  return Status::ok();
}

Status KeyReader::read_bool(std::string_view key, bool* out, bool required) {
  note_known(key);
  const toml::node* node = table_.get(key);
  if (!node) return required ? missing(key) : Status::ok();
  read_.insert(std::string(key));
  if (!node->is_boolean()) {
    return Status::invalid(where(key) + ": value " + describe(*node) + " is not allowed (allowed: true, false)");
  }
  *out = *node->value<bool>();
  return Status::ok();
}

Status KeyReader::read_string(std::string_view key, std::string* out, bool required) {
  note_known(key);
  const toml::node* node = table_.get(key);
  if (!node) return required ? missing(key) : Status::ok();
  read_.insert(std::string(key));
  if (!node->is_string()) {
    return Status::invalid(where(key) + ": value " + describe(*node) + " is not allowed (allowed: a quoted string)");
  }
  *out = *node->value<std::string>();
  return Status::ok();
}

Status KeyReader::read_choice(std::string_view key, size_t* index, bool required,
                              const std::vector<std::string>& allowed) {
  note_known(key);
  const toml::node* node = table_.get(key);
  if (!node) return required ? missing(key) : Status::ok();
  read_.insert(std::string(key));
  if (node->is_string()) {
    const std::string text = *node->value<std::string>();
    for (size_t i = 0; i < allowed.size(); ++i) {
      if (allowed[i] == text) {
        *index = i;
        return Status::ok();
      }
    }
  }
  return Status::invalid(where(key) + ": value " + describe(*node) + " is not allowed (allowed: " + join(allowed) + ")");
}

Status KeyReader::check_no_unknown_keys() const {
  for (auto&& [key, node] : table_) {
    const std::string name(key.str());
    if (read_.count(name) == 0) {
      std::string closest;  // the allowed key with the fewest edits, when it is a plausible typo
      size_t best = std::string::npos;
      for (const auto& k : known_) {
        if (is_close(name, k) && edit_distance(name, k) < best) best = edit_distance(name, k), closest = k;
      }
      return Status::invalid(where(name) + ": unknown key (allowed: " + join(known_) +
                             (closest.empty() ? "" : "; closest: \"" + closest + "\"") + ")");
    }
  }
  return Status::ok();
}

Result<toml::table> parse_toml_file(const std::string& path) {
  SPPLAN_ASSIGN_OR_RETURN(const std::string text, read_config_text(path));
  SPPLAN_RETURN_IF_ERROR(check_key_depth(path, text));
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    // printable(): toml++ quotes the character it stopped at as is, a newline included
    // ("expected 'nan', saw 'n<newline>'"), which broke the one-line rule (found by fuzz_gpu_toml).
    return Status::invalid(path + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) + ": " +
                           printable(error.description()));
  }
}

}  // namespace spplan
