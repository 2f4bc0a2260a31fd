#include "planner/config/config_keys.hpp"

#include <cstdio>
#include <string_view>
#include <utility>

#include "planner/core/parse.hpp"
#include "planner/core/utf8_text.hpp"

namespace spplan {

namespace {

// A message names a value, it need not hold it: a prefix this long, with the containers nested
// deeper than this written [...] and {...}, shows what the file says.
constexpr size_t kShortDumpChars = 60;
constexpr int kShortDumpDepth = 8;

// The JSON escape dump() writes for byte `c`, or "" for a byte it writes as it is.
std::string json_escape(char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte != 0x7f) return "";
  char code[8];
  std::snprintf(code, sizeof code, "\\u%04x", byte);
  return code;
}

// A JSON string literal as dump() writes it, of a prefix of `text` long enough to fill the message
// (+ 4 bytes: a UTF-8 character cut there lies past the message's cut), with each byte that is not
// UTF-8 written \xNN where dump() throws (type_error 316).
void append_short_string(std::string_view text, std::string* out) {
  std::string escaped = "\"";
  for (const char c : text.substr(0, kShortDumpChars + 4)) {
    const std::string escape = json_escape(c);
    if (escape.empty()) {
      escaped += c;
    } else {
      escaped += escape;
    }
  }
  *out += utf8_text(escaped) + "\"";
}

// `v` in dump()'s compact form, appended to *out until it holds more than kShortDumpChars; `depth`
// containers hold it. The recursion stops at kShortDumpDepth, not at the value's depth: dump()
// recurses once a level, and a config.json's array nested 100,000 deep overflowed the stack.
void append_short(const nlohmann::json& v, int depth, std::string* out) {
  if (v.is_string()) return append_short_string(v.get_ref<const std::string&>(), out);
  if (!v.is_structured()) {
    *out += v.dump();  // a number, a boolean or null: no string inside, so nothing to throw on
    return;
  }
  const bool object = v.is_object();
  *out += object ? '{' : '[';
  if (depth >= kShortDumpDepth && !v.empty()) {
    *out += "...";
  } else {
    for (auto it = v.begin(); it != v.end() && out->size() <= kShortDumpChars; ++it) {
      if (it != v.begin()) *out += ',';
      if (object) {
        append_short_string(it.key(), out);
        *out += ':';
      }
      append_short(*it, depth + 1, out);
    }
  }
  *out += object ? '}' : ']';
}

}  // namespace

std::string short_dump(const nlohmann::json& v) {
  std::string text;
  append_short(v, 0, &text);
  if (text.size() <= kShortDumpChars) return text;
  size_t cut = kShortDumpChars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "...";
}

ConfigKeys::ConfigKeys(const std::string& path, const nlohmann::json& object, std::string prefix)
    : path_(path), object_(object), prefix_(std::move(prefix)) {}

ConfigKeys ConfigKeys::nested(const std::string& key) const {
  static const nlohmann::json kAbsent;  // null: every key absent
  const bool object = present(key) && object_[key].is_object();
  return ConfigKeys(path_, object ? object_[key] : kAbsent, prefix_ + key + ".");
}

bool ConfigKeys::present(const std::string& key) const {
  return object_.is_object() && object_.contains(key) && !object_[key].is_null();
}

std::string ConfigKeys::model_type() const {
  return present("model_type") && object_["model_type"].is_string() ? object_["model_type"].get<std::string>() : "";
}

Status ConfigKeys::say(const std::string& key, const std::string& what, const std::string& allowed) const {
  return Status::invalid(path_ + ": key \"" + prefix_ + key + "\": " + what +
                         (allowed.empty() ? "" : " (allowed: " + allowed + ")"));
}

Status ConfigKeys::refuse(const std::string& key, const nlohmann::json& v, const std::string& what,
                          const std::string& allowed) const {
  return say(key, "value " + short_dump(v) + " " + what, allowed);
}

Status ConfigKeys::bad_value(const std::string& key, const nlohmann::json& v, const std::string& allowed) const {
  return refuse(key, v, "is not allowed", allowed);
}

bool ConfigKeys::whole_in(const nlohmann::json& v, uint64_t min, uint64_t max) {
  const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
  return whole && v.get<uint64_t>() >= min && v.get<uint64_t>() <= max;
}

Status ConfigKeys::whole_from(const std::string& key, int64_t min, int64_t fallback, int64_t max, int64_t* out) const {
  if (!present(key)) {
    if (fallback < 0) return say(key, "missing (required)");
    *out = fallback;
    return Status::ok();
  }
  const nlohmann::json& v = object_[key];
  if (!whole_in(v, static_cast<uint64_t>(min), static_cast<uint64_t>(max))) {
    return bad_value(key, v, "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  *out = static_cast<int64_t>(v.get<uint64_t>());
  return Status::ok();
}

Status ConfigKeys::whole(const std::string& key, int64_t fallback, int64_t max, int64_t* out) const {
  return whole_from(key, 1, fallback, max, out);
}

Status ConfigKeys::count(const std::string& key, int64_t fallback, int64_t max, int64_t* out) const {
  return whole_from(key, 0, fallback, max, out);
}

Status ConfigKeys::number(const std::string& key, double min, double max, double* out) const {
  if (!present(key)) return Status::ok();
  const nlohmann::json& v = object_[key];
  if (!v.is_number() || !(v.get<double>() >= min && v.get<double>() <= max)) {
    return bad_value(key, v, "a number from " + format_number(min) + " to " + format_number(max));
  }
  *out = v.get<double>();
  return Status::ok();
}

Status ConfigKeys::flag(const std::string& key, bool* out) const {
  if (!present(key)) return Status::ok();
  if (!object_[key].is_boolean()) return bad_value(key, object_[key], "true, false");
  *out = object_[key].get<bool>();
  return Status::ok();
}

Status ConfigKeys::text(const std::string& key, std::string* out) const {
  if (!present(key)) return Status::ok();
  if (!object_[key].is_string()) return bad_value(key, object_[key], "a string");
  *out = object_[key].get<std::string>();
  return Status::ok();
}

}  // namespace spplan
