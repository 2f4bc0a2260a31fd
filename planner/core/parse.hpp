// Parsing of the small value syntaxes users type on the command line and in configs.
// Every failure is a one-line Status naming `what` (a flag or key), the value, and what is allowed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan {

// The longest sequence any input may ask for; beyond it the costmodel's numbers stop meaning anything.
inline constexpr int64_t kMaxSeqLen = 1'000'000'000'000;
// The range of a config value or flag: products such as GiB x bytes and quotients such as
// FLOPs / (TFLOPs x efficiency) stay finite (1e-320 TFLOPs made the step time infinite).
inline constexpr double kMaxNumber = 1e15;
inline constexpr double kMinPositive = 1e-15;

// "131072", "1.5e7" (15,000,000: the decimal millions papers write), "128k", "128K", "1.5M", "2m":
// k = 1024, M = 1024^2 tokens. REQUIRES nothing; the result is a whole number of tokens from 1 to
// kMaxSeqLen.
Result<int64_t> parse_seq_len(std::string_view what, std::string_view text);
// The forms parse_seq_len takes, as flags' help lists them.
inline constexpr const char* kSeqLenForms = "131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2)";

// A whole number in [min, max].
Result<int64_t> parse_int(std::string_view what, std::string_view text, int64_t min, int64_t max);

// A finite number from min to max.
Result<double> parse_double(std::string_view what, std::string_view text, double min, double max = kMaxNumber);

// A number for messages: "0.5", "1e+15" (up to 15 significant digits, no trailing zeros).
std::string format_number(double value);
// `value` in a printf `format` with one double conversion ("%.1f GiB"), for reports; at most 63
// characters.
std::string format_number(const char* format, double value);
// "0.42 s", "28.1 s", "12 min 5 s", "7 h 49 min", "3 d 4 h": a duration as a person reads it; "-"
// for a negative or non-finite one.
std::string duration_text(double seconds);
// "3,577": a count with thousands separators, rounded; the CLI's tables and the GUI's alike.
// `text` quoted for a POSIX shell when it holds more than a plain path's characters: the commands
// a message tells the user to run (scripts/tokenize.py ...), pasted as they are.
std::string shell_word(const std::string& text);
std::string count_text(double count);
// "685K", "5.09M": a sequence length in the --seq forms (K = 1024, M = 1024^2), 3 significant
// digits; the CLI's tables and the GUI's both print lengths so.
std::string seq_text(int64_t tokens);

// One of `allowed`; returns its index.
Result<size_t> parse_choice(std::string_view what, std::string_view text,
                            const std::vector<std::string>& allowed);

// `text` with control characters (newline, tab, ...) shown as \xNN: for one-line messages and for
// names copied into comments of generated files, where a newline would start a new line of code.
std::string printable(std::string_view text);

// "a, b, c" for messages.
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
std::string join_ints(const std::vector<int64_t>& items, std::string_view sep = ", ");
// join's inverse: "a,b,,c" split at "," -> {"a", "b", "", "c"}; empty items are kept (callers
// refuse or drop them). REQUIRES: sep is not empty.
std::vector<std::string> split(std::string_view text, std::string_view sep);

}  // namespace spplan
