#include "planner/config/json_file.hpp"

#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/utf8_text.hpp"

namespace spplan {
namespace {

using Json = nlohmann::json;

// nlohmann's own DOM builder (json_sax_dom_parser, what json::parse without a callback uses;
// nlohmann/json 3.11.2 include/nlohmann/detail/input/json_sax.hpp) with two checks on the way:
// an object or array past kMaxJsonNesting and a key given twice in one object stop the parse.
// Stopping keeps the value at most kMaxJsonNesting deep. json::parse with a callback, which this
// replaces, scans the enclosing array each time an object in it ends: 140,000 "{}" took 4 s.
class CheckedDomBuilder {
 public:
  explicit CheckedDomBuilder(Json* root) : dom_(*root, /*allow_exceptions=*/true) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& text) { return dom_.number_float(v, text); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t size) {
    keys_per_object_.emplace_back();
    return open() && dom_.start_object(size);
  }
  bool key(Json::string_t& key) {
    if (depth_ == 1) top_key_ = key;
    if (!keys_per_object_.back().insert(key).second) {
      duplicate_ = key;
      return false;
    }
    return dom_.key(key);
  }
  bool end_object() {
    keys_per_object_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t size) { return open() && dom_.start_array(size); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    return dom_.parse_error(position, token, error);  // throws `error`
  }

  // Why the parse stopped early, or OK.
  Status refusal(const std::string& path) const {
    if (too_deep_) {
      const std::string where = deep_top_key_.empty() ? "" : ": key \"" + printable(deep_top_key_) + "\"";
      return Status::invalid(path + where + ": objects and arrays nested more than " + std::to_string(kMaxJsonNesting) +
                             " deep (allowed: at most " + std::to_string(kMaxJsonNesting) +
                             " levels, the top-level object counted)");
    }
    // JSON leaves a repeated key to the reader (nlohmann keeps the last); two values for one key
    // mean the file was merged or edited by hand, and either value may be the intended one.
    if (!duplicate_.empty()) {
      return Status::invalid(path + ": key \"" + printable(duplicate_) +
                             "\": given twice in one object (allowed: each key once)");
    }
    return Status::ok();
  }

 private:
  bool open() {
    if (++depth_ <= kMaxJsonNesting) return true;
    too_deep_ = true;
    deep_top_key_ = top_key_;
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::vector<std::set<std::string>> keys_per_object_;  // the keys seen in each open object
  int depth_ = 0;                                       // objects and arrays open
  std::string top_key_;                                 // the top-level object's latest key
  bool too_deep_ = false;
  std::string deep_top_key_, duplicate_;
};

// Every string and key of *root made UTF-8 (utf8_text); the walk keeps its own stack, so a value
// of any depth is walked in constant stack.
void make_utf8(Json* root) {
  std::vector<Json*> todo{root};
  while (!todo.empty()) {
    Json* v = todo.back();
    todo.pop_back();
    if (v->is_string()) {
      auto& text = v->get_ref<std::string&>();
      if (!is_utf8(text)) text = utf8_text(text);
    } else if (v->is_array()) {
      for (auto& element : *v) todo.push_back(&element);
    } else if (v->is_object()) {
      // A key cannot change in place: an object with a bad key is built again, its values moved.
      bool bad_key = false;
      for (auto it = v->begin(); it != v->end() && !bad_key; ++it) bad_key = !is_utf8(it.key());
      if (bad_key) {
        Json fixed = Json::object();
        for (auto& [key, value] : v->items()) fixed[utf8_text(key)] = std::move(value);
        *v = std::move(fixed);
      }
      for (auto& [key, value] : v->items()) todo.push_back(&value);
    }
  }
}

}  // namespace

Result<Json> read_json_object(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  std::ifstream in(path);
  const std::string allowed = " (allowed: a JSON object, as in a config.json)";
  try {
    Json j;
    CheckedDomBuilder builder(&j);
    Json::sax_parse(in, &builder);  // false where the builder stopped it: refusal() says why
    SPPLAN_RETURN_IF_ERROR(builder.refusal(path));
    if (j.is_object()) return j;
    return Status::invalid(path + ": the top level is " + std::string(j.type_name()) + allowed);
  } catch (const Json::parse_error& error) {
    return Status::invalid(path + ": not valid JSON at byte " + std::to_string(error.byte) + allowed);
  } catch (const Json::exception& error) {  // out_of_range: a number such as 1e400
    const std::string what = error.what();
    return Status::invalid(path + ": not valid JSON: " + what.substr(what.find("] ") + 2) + allowed);
  }
}

std::string dump_utf8(Json j, int indent) {
  make_utf8(&j);
  return j.dump(indent);
}

}  // namespace spplan
