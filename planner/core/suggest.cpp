#include "planner/core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace spplan {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool starts_with(std::string_view name, std::string_view prefix) {
  if (prefix.size() > name.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (lower(name[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the swap looks two rows back.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> closest_name(std::string_view text, const std::vector<std::string>& known) {
  if (text.empty()) return std::nullopt;
  std::optional<std::string> best;
  size_t best_distance = 0;
  bool tie = false;
  for (const std::string& name : known) {
    const size_t d = edit_distance(text, name);
    if (d == 0) return std::nullopt;  // the name is known: nothing was mistyped
    if (!best || d < best_distance) {
      best = name;
      best_distance = d;
      tie = false;
    } else if (d == best_distance && name != *best) {
      tie = true;
    }
  }
  const size_t longer = best ? std::max(text.size(), best->size()) : 0;
  if (best && !tie && best_distance <= std::max<size_t>(1, longer / 3)) return best;
  // A name cut short ("qwen3" for one preset only) is a prefix of exactly one name.
  std::optional<std::string> prefixed;
  for (const std::string& name : known) {
    if (!starts_with(name, text)) continue;
    if (prefixed) return std::nullopt;
    prefixed = name;
  }
  return text.size() >= 3 ? prefixed : std::nullopt;
}

std::string did_you_mean(std::string_view text, const std::vector<std::string>& known, std::string_view prefix,
                         std::string_view quote) {
  const std::optional<std::string> name = closest_name(text, known);
  if (!name) return "";
  return "; did you mean " + std::string(quote) + std::string(prefix) + *name + std::string(quote) + "?";
}

}  // namespace spplan
