#include "planner/check/json_text.hpp"

#include <cmath>

#include "planner/config/json_file.hpp"

namespace spplan::check {
namespace {

// `text` with NaN, Infinity and -Infinity outside strings written null, or nullopt when objects and
// arrays nest deeper than kMaxJsonNesting.
std::optional<std::string> plain_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') {
      if (++depth > kMaxJsonNesting) return std::nullopt;
    }
    if (c == '}' || c == ']') --depth;
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, word.size()) == word) {
        out += "null";
        i += word.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace

Result<nlohmann::json> parse_json_value(const std::string& where, std::string_view text) {
  const std::optional<std::string> plain = plain_json(text);
  if (!plain) {
    return Status::invalid(where + ": objects and arrays nested more than " + std::to_string(kMaxJsonNesting) +
                           " deep (allowed: at most " + std::to_string(kMaxJsonNesting) + " levels)");
  }
  try {
    return nlohmann::json::parse(*plain);
  } catch (const nlohmann::json::parse_error& e) {
    return Status::invalid(where + ": not valid JSON at byte " + std::to_string(e.byte) + " (allowed: a JSON log)");
  } catch (const nlohmann::json::exception& e) {  // out_of_range: 1e400
    return Status::invalid(where + ": not valid JSON: a number out of range (allowed: a JSON log)");
  }
}

Result<std::vector<nlohmann::json>> parse_json_lines(const std::string& where, std::string_view text) {
  std::vector<nlohmann::json> lines;
  size_t number = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string at = where + ": line " + std::to_string(number);
    SPPLAN_ASSIGN_OR_RETURN(nlohmann::json j, parse_json_value(at, line));
    if (!j.is_object()) return Status::invalid(at + ": a JSON " + std::string(j.type_name()) + " (allowed: one JSON object a line)");
    lines.push_back(std::move(j));
  }
  return lines;
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace spplan::check
