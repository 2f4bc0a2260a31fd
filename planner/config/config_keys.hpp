// The keys of one object of a Hugging Face config.json: the whole file, or an object nested in it
// ("text_config", "vision_config", "rope_scaling"), read as transformers' config classes read
// them: a key absent or null takes the class's default. Every refusal is one line naming the file,
// the key as a path from the top ("vision_config.hidden_size"), the value (cut short: a nested
// object can be arbitrarily long) and what is allowed. The config.json readers (config_json_
// loader.cpp, multimodal_encoders.cpp, rope_scaling.cpp) all read through it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/core/status.hpp"

namespace spplan {

// A JSON value for messages: dump()'s compact text cut after 60 characters ("..."), containers
// nested deeper than 8 shown as [...] or {...}, bytes that are not UTF-8 as \xNN. Never throws, and
// its stack does not grow with the value's depth.
std::string short_dump(const nlohmann::json& v);

class ConfigKeys {
 public:
  // `prefix` names the object in messages: "" for the top level, "vision_config." for a nested one.
  // `path` and `object` must outlive the reader.
  ConfigKeys(const std::string& path, const nlohmann::json& object, std::string prefix = "");

  // The object under `key`, its keys named "PREFIX" "key." KEY; absent, null or not an object: an
  // empty reader whose every key is absent (so the class's defaults).
  ConfigKeys nested(const std::string& key) const;

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return object_; }
  // The key there and not null.
  bool present(const std::string& key) const;
  // The object's "model_type" when it is a string, else "".
  std::string model_type() const;

  // `path: key "PREFIXkey": value V is not allowed (allowed: A)`.
  Status bad_value(const std::string& key, const nlohmann::json& v, const std::string& allowed) const;
  // `path: key "PREFIXkey": value V WHAT (allowed: A)`: a value well formed but not priced.
  Status refuse(const std::string& key, const nlohmann::json& v, const std::string& what,
                const std::string& allowed) const;
  // `path: key "PREFIXkey": WHAT (allowed: A)` or, without `allowed`, `...: WHAT`.
  Status say(const std::string& key, const std::string& what, const std::string& allowed = "") const;

  // A whole number in [1, max]; absent: `fallback`, or "missing (required)" where fallback < 0.
  Status whole(const std::string& key, int64_t fallback, int64_t max, int64_t* out) const;
  // A whole number in [0, max]; absent: `fallback` (>= 0).
  Status count(const std::string& key, int64_t fallback, int64_t max, int64_t* out) const;
  // A number in [min, max]; absent: *out unchanged.
  Status number(const std::string& key, double min, double max, double* out) const;
  // true or false; absent: *out unchanged.
  Status flag(const std::string& key, bool* out) const;
  // A string; absent: *out unchanged.
  Status text(const std::string& key, std::string* out) const;

 private:
  // A whole number in [min, max]; absent: `fallback`, or "missing (required)" where fallback < 0.
  Status whole_from(const std::string& key, int64_t min, int64_t fallback, int64_t max, int64_t* out) const;
  // Whether `v` is a whole number in [min, max]: JSON text parses 8192 as unsigned, a TOML table
  // converted to JSON holds it signed; both count, and 2^64 - 1 must not wrap to -1.
  static bool whole_in(const nlohmann::json& v, uint64_t min, uint64_t max);

  const std::string& path_;
  const nlohmann::json& object_;
  std::string prefix_;
};

}  // namespace spplan
