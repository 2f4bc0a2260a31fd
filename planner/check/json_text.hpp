// JSON as training stacks write it. Python's json.dumps (transformers' trainer_state.json,
// ArcticTraining's metrics lines) writes a float nan or inf as NaN, Infinity, -Infinity, which
// JSON does not allow and nlohmann refuses: here they read as null (no value), so a run whose loss
// went NaN still reads. Nesting past kMaxJsonNesting is refused before parsing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/core/status.hpp"

namespace spplan::check {

// One JSON value from `text`; fails naming `where` and the byte where parsing stopped.
Result<nlohmann::json> parse_json_value(const std::string& where, std::string_view text);
// Each non-blank line of `text` as a JSON object; fails naming `where` and the line.
Result<std::vector<nlohmann::json>> parse_json_lines(const std::string& where, std::string_view text);

// `j[key]` when it is a finite number.
std::optional<double> number_at(const nlohmann::json& j, const char* key);

}  // namespace spplan::check
