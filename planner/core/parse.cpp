#include "planner/core/parse.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <string>

namespace spplan {
namespace {

std::string quoted(std::string_view text) { return "\"" + printable(text) + "\""; }

}  // namespace

Result<int64_t> parse_seq_len(std::string_view what, std::string_view text) {
  const std::string allowed = std::string("(allowed: a positive token count: ") + kSeqLenForms + ")";
  if (text.empty()) return Status::invalid(std::string(what) + ": empty value " + allowed);
  double multiplier = 1.0;
  std::string_view number = text;
  const char last = text.back();
  if (last == 'k' || last == 'K') {
    multiplier = 1024.0;
    number.remove_suffix(1);
  } else if (last == 'm' || last == 'M') {
    multiplier = 1024.0 * 1024.0;
    number.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  // An exponent is a decimal count ("1.5e7" is 15,000,000 tokens, as ALST's "15M" is), so it takes
  // no binary suffix: "1e3k" would mix the two conventions in one number.
  const bool exponent = number.find_first_of("eE") != std::string_view::npos;
  if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value) ||
      (exponent && multiplier != 1.0)) {
    return Status::invalid(std::string(what) + ": value " + quoted(text) + " is not a sequence length " + allowed);
  }
  const double tokens = value * multiplier;
  if (tokens > static_cast<double>(kMaxSeqLen)) {
    return Status::invalid(std::string(what) + ": value " + quoted(text) + " is too long (allowed: at most " +
                           std::to_string(kMaxSeqLen) + " tokens)");
  }
  if (tokens < 1 || tokens != std::floor(tokens)) {
    return Status::invalid(std::string(what) + ": value " + quoted(text) + " is not a whole positive number of tokens " +
                           allowed);
  }
  return static_cast<int64_t>(tokens);
}

Result<int64_t> parse_int(std::string_view what, std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return Status::invalid(std::string(what) + ": value " + quoted(text) + " is not allowed (allowed: a whole number from " +
                           std::to_string(min) + " to " + std::to_string(max) + ")");
  }
  return value;
}

Result<double> parse_double(std::string_view what, std::string_view text, double min, double max) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < min ||
      value > max) {
    return Status::invalid(std::string(what) + ": value " + quoted(text) + " is not allowed (allowed: a number from " +
                           format_number(min) + " to " + format_number(max) + ")");
  }
  return value;
}

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string format_number(double value) {
  std::ostringstream out;
  out << std::setprecision(15) << value;  // enough digits to tell 1.0000001 from 1, not 0.9000000000000002
  return out.str();
}

Result<size_t> parse_choice(std::string_view what, std::string_view text, const std::vector<std::string>& allowed) {
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (allowed[i] == text) return i;
  }
  return Status::invalid(std::string(what) + ": value " + quoted(text) + " is not allowed (allowed: " + join(allowed) +
                         ")");
}

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view text, std::string_view sep) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t at = text.find(sep); at != std::string_view::npos; at = text.find(sep, start)) {
    items.emplace_back(text.substr(start, at - start));
    start = at + sep.size();
  }
  items.emplace_back(text.substr(start));
  return items;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string join_ints(const std::vector<int64_t>& items, std::string_view sep) {
  std::vector<std::string> strings;
  strings.reserve(items.size());
  for (int64_t v : items) strings.push_back(std::to_string(v));
  return join(strings, sep);
}

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./+:=,-") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string count_text(double count) {
  std::string digits = format_number("%.0f", count);
  const int first = digits[0] == '-' ? 1 : 0;
  for (int at = static_cast<int>(digits.size()) - 3; at > first; at -= 3) digits.insert(static_cast<size_t>(at), ",");
  return digits;
}

std::string seq_text(int64_t tokens) {
  const double t = static_cast<double>(tokens);
  if (t >= 1024.0 * 1024) return format_number("%.3gM", t / (1024.0 * 1024));
  if (t >= 1024) return format_number("%.3gK", t / 1024);
  return std::to_string(tokens);
}

std::string duration_text(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "-";
  if (seconds < 60) return format_number(seconds < 10 ? "%.2f s" : "%.1f s", seconds);
  const long long whole = std::llround(seconds), minutes = whole / 60;
  char text[64];
  if (whole < 3600) {
    std::snprintf(text, sizeof text, "%lld min %lld s", minutes, whole % 60);
  } else if (minutes < 48 * 60) {
    std::snprintf(text, sizeof text, "%lld h %lld min", minutes / 60, minutes % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld d %lld h", minutes / (24 * 60), minutes / 60 % 24);
  }
  return text;
}


}  // namespace spplan
