// Small pieces for reading the text logs (DeepSpeed's, torch's memory lines, nvidia-smi's CSV).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace spplan::check {

// The lines of `text` (a trailing "\r" dropped).
std::vector<std::string_view> text_lines(std::string_view text);
// The finite number that follows the first `key` in `line` after any of " :=()", and in `*rest`
// what follows the number; nullopt when `key` is absent or no number follows it.
std::optional<double> number_after(std::string_view line, std::string_view key, std::string_view* rest = nullptr);
// A finite number that is all of `text` but blanks around it.
std::optional<double> whole_number(std::string_view text);
// Bytes per unit for "B", "bytes", "KiB", "MiB", "GiB", "KB", "MB", "GB" at the start of `text`
// (blanks skipped; KB, MB, GB decimal); 1 when none is there.
double unit_bytes(std::string_view text);

}  // namespace spplan::check
