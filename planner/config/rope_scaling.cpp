#include "planner/config/rope_scaling.hpp"

#include <cmath>

#include "planner/core/parse.hpp"

namespace spplan {
namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxContext = int64_t{1} << 40;

// A rope object's keys (config_keys.hpp), with what a rope_type requires.
class RopeReader {
 public:
  explicit RopeReader(const ConfigKeys& keys) : keys_(keys) {}

  Status bad(const std::string& key, const Json& v, const std::string& allowed) const {
    return keys_.bad_value(key, v, allowed);
  }
  bool present(const std::string& key) const { return keys_.present(key); }

  // A number in [min, kMaxNumber]; absent: unchanged unless required.
  Status number(const std::string& key, double min, bool required, double* out) const {
    if (required && !present(key)) return missing(key);
    return keys_.number(key, min, kMaxNumber, out);
  }
  Status whole(const std::string& key, bool required, int64_t* out) const {
    if (required && !present(key)) return missing(key);
    return keys_.whole(key, *out, kMaxContext, out);  // absent: *out kept
  }
  // The share of each head RoPE rotates (GLM's partial_rotary_factor): in (0, 1]; absent: unchanged.
  Status rotated_share(double* out) const {
    if (!present("partial_rotary_factor")) return Status::ok();
    const Json& f = keys_.json()["partial_rotary_factor"];
    if (!f.is_number() || !(f.get<double>() > 0 && f.get<double>() <= 1)) {
      return bad("partial_rotary_factor", f, "a number above 0, at most 1");
    }
    *out = f.get<double>();
    return Status::ok();
  }
  Status boolean(const std::string& key, bool* out) const { return keys_.flag(key, out); }
  // "rope_type", or transformers 4's older "type"; absent: default.
  Status type(RopeType* out) {
    const char* key = present("rope_type") ? "rope_type" : present("type") ? "type" : nullptr;
    if (key == nullptr) return Status::ok();
    const Json& v = keys_.json()[key];
    const auto& names = rope_type_names();
    for (size_t i = 0; v.is_string() && i < names.size(); ++i) {
      if (v.get<std::string>() == names[i]) {
        *out = static_cast<RopeType>(i);
        type_name_ = names[i];
        return Status::ok();
      }
    }
    std::string allowed;
    for (const std::string& n : names) allowed += (allowed.empty() ? "\"" : ", \"") + n + "\"";
    return bad(key, v, allowed);
  }

 private:
  Status missing(const std::string& key) const {
    return keys_.say(key, "missing (required by rope_type \"" + type_name_ + "\")");
  }

  const ConfigKeys& keys_;
  std::string type_name_ = "default";
};

// `top` is the object holding max_position_embeddings; `scaling` the rope object inside it.
Status read_scaling(const ConfigKeys& top, const ConfigKeys& scaling, ModelSpec* m) {
  RopeReader r(scaling);
  RopeScaling& s = m->rope_scaling;
  SPPLAN_RETURN_IF_ERROR(r.type(&s.type));
  // transformers 5 saves GLM's partial_rotary_factor here (its rotary embedding reads it from
  // rope_parameters); transformers 4 at the top level (read_rope_config).
  SPPLAN_RETURN_IF_ERROR(r.rotated_share(&m->partial_rotary_factor));
  if (s.type == RopeType::kDefault) return Status::ok();
  SPPLAN_RETURN_IF_ERROR(r.number("factor", 1.0, true, &s.factor));
  if (s.type == RopeType::kDynamic && m->max_position_embeddings == 0) {
    return top.say("max_position_embeddings", "missing (required by rope_type \"dynamic\")");
  }
  if (s.type == RopeType::kLlama3) {
    SPPLAN_RETURN_IF_ERROR(r.number("low_freq_factor", kMinPositive, true, &s.low_freq_factor));
    SPPLAN_RETURN_IF_ERROR(r.number("high_freq_factor", kMinPositive, true, &s.high_freq_factor));
    SPPLAN_RETURN_IF_ERROR(r.whole("original_max_position_embeddings", true, &s.original_max_position_embeddings));
    if (s.high_freq_factor <= s.low_freq_factor) {  // the smoothing divides by their difference
      return r.bad("high_freq_factor", scaling.json()["high_freq_factor"],
                   "a number above low_freq_factor " + format_number(s.low_freq_factor));
    }
  }
  if (s.type == RopeType::kYarn) {
    s.original_max_position_embeddings = m->max_position_embeddings;
    SPPLAN_RETURN_IF_ERROR(r.whole("original_max_position_embeddings", s.original_max_position_embeddings == 0,
                                   &s.original_max_position_embeddings));
    SPPLAN_RETURN_IF_ERROR(r.number("attention_factor", kMinPositive, false, &s.attention_factor));
    SPPLAN_RETURN_IF_ERROR(r.number("beta_fast", kMinPositive, false, &s.beta_fast));
    SPPLAN_RETURN_IF_ERROR(r.number("beta_slow", kMinPositive, false, &s.beta_slow));
    SPPLAN_RETURN_IF_ERROR(r.number("mscale", 0.0, false, &s.mscale));
    SPPLAN_RETURN_IF_ERROR(r.number("mscale_all_dim", 0.0, false, &s.mscale_all_dim));
    SPPLAN_RETURN_IF_ERROR(r.boolean("truncate", &s.truncate));
  }
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& rope_type_names() {
  static const std::vector<std::string> kNames{"default", "linear", "dynamic", "yarn", "llama3"};
  return kNames;
}

std::string to_string(RopeType type) { return rope_type_names()[static_cast<size_t>(type)]; }

Status read_rope_config(const ConfigKeys& c, ModelSpec* m) {
  const RopeReader top(c);
  const Json& j = c.json();
  SPPLAN_RETURN_IF_ERROR(top.number("rope_theta", kMinPositive, false, &m->rope_theta));
  SPPLAN_RETURN_IF_ERROR(top.whole("max_position_embeddings", false, &m->max_position_embeddings));
  SPPLAN_RETURN_IF_ERROR(top.rotated_share(&m->partial_rotary_factor));
  // transformers 5 keeps rope_theta and the scaling together in "rope_parameters".
  if (top.present("rope_parameters")) {
    if (!j["rope_parameters"].is_object()) return top.bad("rope_parameters", j["rope_parameters"], "an object or null");
    const ConfigKeys params = c.nested("rope_parameters");
    SPPLAN_RETURN_IF_ERROR(RopeReader(params).number("rope_theta", kMinPositive, false, &m->rope_theta));
    const bool v5_scaled = params.present("rope_type") && j["rope_parameters"]["rope_type"] != "default";
    if (v5_scaled || !top.present("rope_scaling")) return read_scaling(c, params, m);
  }
  if (!top.present("rope_scaling")) return Status::ok();
  if (!j["rope_scaling"].is_object()) return top.bad("rope_scaling", j["rope_scaling"], "an object or null");
  return read_scaling(c, c.nested("rope_scaling"), m);
}

std::string rope_text(const RopeScaling& r) {
  const Json j = rope_scaling_json(r);
  if (j.is_null()) return "default";
  std::string text = to_string(r.type) + " (";
  bool first = true;
  for (const auto& [key, v] : j.items()) {
    if (key == "rope_type") continue;
    text += (first ? "" : ", ") + key + " " + (v.is_number() ? format_number(v.get<double>()) : v.dump());
    first = false;
  }
  return text + ")";
}

Json rope_scaling_json(const RopeScaling& r) {
  if (r.type == RopeType::kDefault) return Json();
  Json j{{"rope_type", to_string(r.type)}, {"factor", r.factor}};
  if (r.type == RopeType::kLlama3) {
    j["low_freq_factor"] = r.low_freq_factor;
    j["high_freq_factor"] = r.high_freq_factor;
  }
  if (r.type == RopeType::kLlama3 || r.type == RopeType::kYarn) {
    j["original_max_position_embeddings"] = r.original_max_position_embeddings;
  }
  if (r.type == RopeType::kYarn) {
    if (r.attention_factor > 0) j["attention_factor"] = r.attention_factor;
    j["beta_fast"] = r.beta_fast;
    j["beta_slow"] = r.beta_slow;
    if (r.mscale > 0) j["mscale"] = r.mscale;
    if (r.mscale_all_dim > 0) j["mscale_all_dim"] = r.mscale_all_dim;
    j["truncate"] = r.truncate;
  }
  return j;
}

}  // namespace spplan
