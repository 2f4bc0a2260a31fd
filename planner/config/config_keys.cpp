#include "planner/config/config_keys.hpp"

#include <utility>

#include "planner/core/parse.hpp"

namespace spplan {

std::string short_dump(const nlohmann::json& v) {
  constexpr size_t kMaxChars = 60;
  const std::string text = v.dump();
  return text.size() <= kMaxChars ? text : text.substr(0, kMaxChars) + "...";
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
