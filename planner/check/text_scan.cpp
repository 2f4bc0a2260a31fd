#include "planner/check/text_scan.hpp"

#include <charconv>
#include <cmath>
#include <utility>

#include "planner/core/units.hpp"

namespace spplan::check {

std::vector<std::string_view> text_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    begin = end + 1;
  }
  return lines;
}

std::optional<double> number_after(std::string_view line, std::string_view key, std::string_view* rest) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + key.size();
  while (i < line.size() && std::string_view(" :=()\t").find(line[i]) != std::string_view::npos) ++i;
  double value = 0;
  const char* first = line.data() + i;
  const auto [end, error] = std::from_chars(first, line.data() + line.size(), value);
  if (error != std::errc() || end == first || !std::isfinite(value)) return std::nullopt;
  if (rest != nullptr) *rest = line.substr(static_cast<size_t>(end - line.data()));
  return value;
}

std::optional<double> whole_number(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(" \t") - first + 1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

double unit_bytes(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return 1;
  text = text.substr(first);
  // Longest names first: "GiB" before "GB" before "B".
  static const std::pair<std::string_view, double> kUnits[] = {
      {"bytes", 1},       {"KiB", 1024.0},   {"MiB", kMiB},     {"GiB", kGiB},
      {"KB", 1e3},        {"MB", 1e6},       {"GB", kGB},       {"B", 1}};
  for (const auto& [name, bytes] : kUnits) {
    if (text.substr(0, name.size()) == name) return bytes;
  }
  return 1;
}

}  // namespace spplan::check
