// "Did you mean": the known name a mistyped one most likely meant, for the messages of unknown
// flags, commands and presets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spplan {

// The edit distance between a and b, ignoring case: insertions, deletions, substitutions and swaps
// of two neighbouring characters each count 1 (optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b);

// The one name of `known` closest to `text`, when it is close enough to be a typo: at most a third
// of the longer name's characters changed (at least 1), or `text` is a prefix of exactly one name.
// None when two names tie, or none is close.
std::optional<std::string> closest_name(std::string_view text, const std::vector<std::string>& known);

// "; did you mean \"qwen3-4b\"?" for closest_name(text, known) with `quote` around it
// ("--model" style names pass "" and a prefix), or "" when none is close.
std::string did_you_mean(std::string_view text, const std::vector<std::string>& known, std::string_view prefix = "",
                         std::string_view quote = "\"");

}  // namespace spplan
