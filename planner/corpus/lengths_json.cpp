// A lengths file in JSON: [LENGTH, ...], {"LENGTH": COUNT, ...} or {"lengths": [LENGTH, ...]}.
// Read as nlohmann's SAX events straight into a tally, never as a DOM: a list of 10^8 lengths is
// 10^8 small values in a DOM (gigabytes), and the one nesting a lengths file has (the "lengths"
// list in its object) is checked as it opens, so a value nested any deeper stops the parse at its
// first bracket (nlohmann's SAX parser keeps its own stack, not the call stack).
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/corpus/lengths_formats.hpp"
#include "planner/corpus/tally.hpp"

namespace spplan::corpus {
namespace {

using Json = nlohmann::json;

constexpr const char* kJsonAllowed = "a JSON list of lengths [LENGTH, ...], {\"LENGTH\": COUNT, ...} or {\"lengths\": [...]}";

// "\"text\"" for a message. Appended, not `"\"" + shown(v) + "\""`: GCC 12's -Wrestrict takes that
// inlined operator+ for an overlapping copy (a false positive).
std::string in_quotes(std::string_view text) {
  std::string q = "\"";
  q += shown(text);
  q += '"';
  return q;
}

class LengthsSax {
 public:
  LengthsSax(const std::string& where, LengthTally* tally) : where_(where), tally_(tally) {}

  bool null() { return value("null"); }
  bool boolean(bool v) { return value(v ? "true" : "false"); }
  bool number_integer(Json::number_integer_t v) { return number(v, std::to_string(v)); }
  bool number_unsigned(Json::number_unsigned_t v) {
    // Past int64_t is past every bound: shown as written, refused as the bound's excess.
    return number(v > static_cast<Json::number_unsigned_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v), std::to_string(v));
  }
  bool number_float(Json::number_float_t, const Json::string_t& text) { return value(shown(text)); }
  bool string(Json::string_t& v) { return value(in_quotes(v)); }
  bool binary(Json::binary_t&) { return value("binary"); }  // not produced by JSON text
  bool start_object(std::size_t) {
    if (state_ == State::kTop) return open(State::kObject);
    return value("an object");
  }
  bool key(Json::string_t& key) {
    if (!keys_.insert(key).second) return fail(where_ + ": key \"" + shown(key) + "\": given twice in one object (allowed: each key once)");
    key_ = key;
    if (key == "lengths") return true;
    key_length_ = whole_number(key, kMaxDocumentTokens);
    if (key_length_ > 0) return true;
    return fail(where_ + ": key \"" + shown(key) + "\": not a document length (allowed: \"lengths\": [LENGTH, ...], or \"LENGTH\": COUNT keys, LENGTH " +
                kLengthAllowed + ")");
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) {
    if (state_ == State::kTop) return open(State::kList);
    if (state_ == State::kObject && key_ == "lengths") return open(State::kObjectList);
    return value("an array");
  }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string&, const Exception& error) {
    const std::string what = error.what();
    // out_of_range 406 is a number past double's range (1e400): its words say so; else the byte.
    if (what.find("out_of_range") != std::string::npos) {
      return fail(where_ + ": not valid JSON: " + what.substr(what.find("] ") + 2) + " (allowed: " + kJsonAllowed + ")");
    }
    return fail(where_ + ": not valid JSON at byte " + std::to_string(position) + " (allowed: " + kJsonAllowed + ")");
  }

  const Status& status() const { return status_; }
  bool saw_top() const { return state_ == State::kDone; }

 private:
  enum class State { kTop, kList, kObject, kObjectList, kDone };

  bool open(State next) {
    state_ = next;
    index_ = 0;
    return true;
  }
  bool close() {
    state_ = state_ == State::kObjectList ? State::kObject : State::kDone;
    return true;
  }
  bool fail(std::string message) {
    if (status_.is_ok()) status_ = Status::invalid(std::move(message));
    return false;
  }
  // Where the value now read sits: "[3]", "key \"lengths\" [3]", "key \"5\"".
  std::string place() const {
    if (state_ == State::kList) return where_ + ": [" + std::to_string(index_) + "]";
    if (state_ == State::kObjectList) return where_ + ": key \"lengths\" [" + std::to_string(index_) + "]";
    return where_ + ": key \"" + shown(key_) + "\"";
  }
  // A value that is no number, or a number out of range.
  bool value(const std::string& text) {
    switch (state_) {
      case State::kTop: return fail(where_ + ": the top level is " + text + " (allowed: " + kJsonAllowed + ")");
      case State::kList:
      case State::kObjectList:
        return fail(place() + ": value " + text + " is not a document length (allowed: " + kLengthAllowed + ")");
      case State::kObject:
        if (key_ == "lengths") {
          return fail(place() + ": value " + text + " is not a list of document lengths (allowed: [LENGTH, ...], LENGTH " +
                      kLengthAllowed + ")");
        }
        return fail(place() + ": value " + text + " is not a document count (allowed: " + kCountAllowed + ")");
      case State::kDone: break;
    }
    return fail(where_ + ": more than one top-level value (allowed: " + kJsonAllowed + ")");
  }
  bool number(int64_t v, const std::string& text) {
    const bool list = state_ == State::kList || state_ == State::kObjectList;
    const bool count = state_ == State::kObject && key_ != "lengths";
    if (list && v >= 1 && v <= kMaxDocumentTokens) {
      const std::string where = place();
      ++index_;
      return ok_or_fail(tally_->add(v, 1, where));
    }
    if (count && v >= 1 && v <= kMaxDocuments) return ok_or_fail(tally_->add(key_length_, v, place()));
    return value(text);
  }
  bool ok_or_fail(Status s) { return s.is_ok() || fail(s.message()); }

  const std::string& where_;
  LengthTally* tally_;
  Status status_;
  State state_ = State::kTop;
  int64_t index_ = 0;         // the list element read next
  std::set<std::string> keys_;  // the object's keys so far
  std::string key_;           // the object's key whose value is read next
  int64_t key_length_ = 0;    // that key as a length
};

}  // namespace

Result<Corpus> read_lengths_json(const std::string& where, std::string_view text) {
  LengthTally tally;
  LengthsSax sax(where, &tally);
  try {
    Json::sax_parse(text.begin(), text.end(), &sax);  // false where the handler stopped it: status() says why
  } catch (const Json::exception& error) {  // sax_parse reports through parse_error; kept as the boundary
    return Status::invalid(where + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  SPPLAN_RETURN_IF_ERROR(sax.status());
  if (tally.documents() == 0) return no_documents(where);
  return tally.take();
}

}  // namespace spplan::corpus
