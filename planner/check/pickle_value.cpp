// The unpickler's stack machine (Python's Lib/pickle.py _Unpickler, Lib/pickletools.py for the
// opcodes and their argument encodings), cut to the plain-data opcodes protocols 2 to 5 write.
#include "planner/check/pickle_value.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace spplan::check::pickle {

const char* kind_name(Kind kind) {
  static const char* const kNames[] = {"None", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict"};
  return kNames[static_cast<size_t>(kind)];
}

double Document::float_value(ValueId v) const {
  double d = 0;
  std::memcpy(&d, &nodes_[v].number, sizeof d);
  return d;
}

std::optional<ValueId> Document::get(ValueId v, std::string_view key) const {
  if (kind(v) != Kind::kDict) return std::nullopt;
  const std::vector<ValueId>& kv = items(v);
  std::optional<ValueId> found;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    if (kind(kv[i]) == Kind::kStr && text(kv[i]) == key) found = kv[i + 1];
  }
  return found;
}

namespace {

// The opcodes by Python's names (pickletools.opcodes).
enum Op : uint8_t {
  kMark = 0x28, kStop = 0x2e, kPop = 0x30, kPopMark = 0x31, kDup = 0x32, kBinBytes = 0x42, kShortBinBytes = 0x43,
  kBinFloat = 0x47, kBinInt = 0x4a, kBinInt1 = 0x4b, kBinInt2 = 0x4d, kNone = 0x4e, kBinUnicode = 0x58,
  kEmptyList = 0x5d, kAppend = 0x61, kAppends = 0x65, kBinGet = 0x68, kLongBinGet = 0x6a, kBinPut = 0x71,
  kLongBinPut = 0x72, kSetItem = 0x73, kTuple = 0x74, kSetItems = 0x75, kEmptyDict = 0x7d, kEmptyTuple = 0x29,
  kProto = 0x80, kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89,
  kLong1 = 0x8a, kLong4 = 0x8b, kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e,
  kMemoize = 0x94, kFrame = 0x95,
};

// The opcodes with which a pickle names a global, builds an object or calls one when Python loads it.
const char* object_opcode_name(uint8_t op) {
  switch (op) {
    case 0x63: return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 0x52: return "REDUCE";
    case 0x62: return "BUILD";
    case 0x69: return "INST";
    case 0x6f: return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x50: return "PERSID";
    case 0x51: return "BINPERSID";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    default: return nullptr;
  }
}

std::string hex_byte(uint8_t b) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

}  // namespace

class Parser {
 public:
  Parser(const std::string& where, std::string_view bytes) : where_(where), bytes_(bytes) {}

  Result<Document> run() {
    while (true) {
      if (pos_ >= bytes_.size()) return fail(pos_, "ends without STOP", "a whole pickle, its last opcode STOP");
      op_at_ = pos_;
      const uint8_t op = static_cast<uint8_t>(bytes_[pos_++]);
      if (op == kStop) {
        if (stack_.empty()) return fail(op_at_, "STOP with nothing on the stack", "a pickle of one value");
        doc_.root_ = stack_.back();
        return std::move(doc_);
      }
      SPPLAN_RETURN_IF_ERROR(step(op));
    }
  }

 private:
  Status fail(size_t at, const std::string& found, const std::string& allowed) const {
    return Status::invalid(where_ + ": byte " + std::to_string(at) + ": " + found + " (allowed: " + allowed + ")");
  }
  Status malformed(const std::string& found) const { return fail(op_at_, found, "a pickle Python's pickle.dumps writes"); }

  // The next `n` bytes, little-endian, as an unsigned number (n <= 8).
  Result<uint64_t> read_le(size_t n) {
    SPPLAN_ASSIGN_OR_RETURN(const std::string_view b, read_bytes(n));
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
    return v;
  }
  Result<std::string_view> read_bytes(uint64_t n) {
    if (n > bytes_.size() - pos_) {
      return fail(op_at_, "truncated: the opcode needs " + std::to_string(n) + " more bytes, " +
                              std::to_string(bytes_.size() - pos_) + " are left", "a whole pickle");
    }
    const std::string_view b = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return b;
  }

  Result<ValueId> make(Kind kind, int64_t number) {
    if (doc_.nodes_.size() >= kMaxValues) {
      return fail(op_at_, "more than " + std::to_string(kMaxValues) + " values",
                  "fewer: torch.cuda.memory._record_memory_history(max_entries=...) keeps fewer trace entries");
    }
    doc_.nodes_.push_back({kind, 0, number});
    return static_cast<ValueId>(doc_.nodes_.size() - 1);
  }
  Status push(ValueId v) {
    if (stack_.size() >= kMaxStack) return malformed("a stack deeper than " + std::to_string(kMaxStack));
    stack_.push_back(v);
    return Status::ok();
  }
  Status push_new(Kind kind, int64_t number) {
    SPPLAN_ASSIGN_OR_RETURN(const ValueId v, make(kind, number));
    return push(v);
  }
  Status push_text(Kind kind, uint64_t length) {
    if (length > kMaxTextBytes) return malformed("a string of " + std::to_string(length) + " bytes, over the " +
                                                 std::to_string(kMaxTextBytes >> 20) + " MiB a value may hold");
    SPPLAN_ASSIGN_OR_RETURN(const std::string_view b, read_bytes(length));
    doc_.texts_.emplace_back(b);
    return push_new(kind, static_cast<int64_t>(doc_.texts_.size() - 1));
  }
  Status push_container(Kind kind, std::vector<ValueId> items) {
    doc_.containers_.push_back({});
    SPPLAN_ASSIGN_OR_RETURN(const ValueId v, make(kind, static_cast<int64_t>(doc_.containers_.size() - 1)));
    SPPLAN_RETURN_IF_ERROR(add_items(v, items.data(), items.size()));
    return push(v);
  }
  // `n` items into container `into`, its depth raised past each.
  Status add_items(ValueId into, const ValueId* items, size_t n) {
    references_ += n;
    if (references_ > kMaxReferences) return malformed("more than " + std::to_string(kMaxReferences) + " items in containers");
    Document::Node& node = doc_.nodes_[into];
    for (size_t i = 0; i < n; ++i) {
      const size_t depth = size_t{doc_.nodes_[items[i]].depth} + 1;
      if (depth > kMaxDepth) return malformed("containers nested more than " + std::to_string(kMaxDepth) + " deep");
      node.depth = std::max(node.depth, static_cast<uint8_t>(depth));
    }
    std::vector<ValueId>& c = doc_.containers_[static_cast<size_t>(node.number)];
    c.insert(c.end(), items, items + n);
    return Status::ok();
  }

  Result<ValueId> pop() {
    if (stack_.size() <= floor()) return malformed("an opcode that takes a value with none on the stack above its mark");
    const ValueId v = stack_.back();
    stack_.pop_back();
    return v;
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // What is above the last MARK, removed with it.
  Result<std::vector<ValueId>> pop_mark() {
    if (marks_.empty()) return malformed("an opcode that takes the items above a MARK with no MARK open");
    std::vector<ValueId> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  Result<std::vector<ValueId>> pop_n(size_t n) {
    if (stack_.size() < floor() + n) return malformed("a TUPLE" + std::to_string(n) + " with fewer values on the stack");
    std::vector<ValueId> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return items;
  }
  // The container below the items, of `kind`: APPEND(S) need a list, SETITEM(S) a dict.
  Result<ValueId> target(Kind kind, const char* opcode) {
    if (stack_.size() <= floor()) return malformed(std::string(opcode) + " with no " + kind_name(kind) + " below its items");
    const ValueId v = stack_.back();
    if (doc_.kind(v) != kind) return malformed(std::string(opcode) + " into a " + kind_name(doc_.kind(v)) + ", not a " + kind_name(kind));
    return v;
  }
  Status append(std::vector<ValueId> items, Kind kind, const char* opcode) {
    if (kind == Kind::kDict && items.size() % 2 != 0) return malformed("SETITEMS with a key and no value");
    SPPLAN_ASSIGN_OR_RETURN(const ValueId into, target(kind, opcode));
    return add_items(into, items.data(), items.size());
  }

  Status memo_put(uint64_t index) {
    if (stack_.size() <= floor()) return malformed("a memo put with nothing on the stack");
    if (memo_.size() >= kMaxValues && !memo_.count(index)) return malformed("a memo of more than " + std::to_string(kMaxValues) + " entries");
    memo_[index] = stack_.back();
    return Status::ok();
  }
  Status memo_get(uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) return malformed("a memo get of entry " + std::to_string(index) + ", never put");
    return push(it->second);
  }

  // LONG1 / LONG4: a two's-complement little-endian integer of `n` bytes.
  Status push_long(uint64_t n) {
    if (n > 8) return malformed("an integer of " + std::to_string(n) + " bytes (a memory snapshot's fit in 8)");
    SPPLAN_ASSIGN_OR_RETURN(uint64_t v, read_le(static_cast<size_t>(n)));
    if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    return push_new(Kind::kInt, static_cast<int64_t>(v));
  }
  Status push_float() {
    SPPLAN_ASSIGN_OR_RETURN(const std::string_view b, read_bytes(8));
    uint64_t bits = 0;
    for (const char c : b) bits = (bits << 8) | static_cast<uint8_t>(c);  // big-endian (pickletools: float8)
    return push_new(Kind::kFloat, static_cast<int64_t>(bits));
  }

  Status step(uint8_t op);
  Status step_container(uint8_t op);
  Status step_scalar(uint8_t op);

  const std::string& where_;
  std::string_view bytes_;
  size_t pos_ = 0, op_at_ = 0, references_ = 0;
  Document doc_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, ValueId> memo_;
};

Status Parser::step(uint8_t op) {
  switch (op) {
    case kProto: {
      SPPLAN_ASSIGN_OR_RETURN(const uint64_t version, read_le(1));
      if (version < 2 || version > 5) return fail(op_at_, "pickle protocol " + std::to_string(version), "protocols 2 to 5");
      return Status::ok();
    }
    case kFrame: return read_le(8).status();  // framing only groups the opcodes that follow
    case kMark:
      if (marks_.size() >= kMaxMarks) return malformed("more than " + std::to_string(kMaxMarks) + " open MARKs");
      marks_.push_back(stack_.size());
      return Status::ok();
    case kPop: return pop().status();
    case kPopMark: return pop_mark().status();
    case kDup:
      if (stack_.size() <= floor()) return malformed("DUP with nothing on the stack");
      return push(stack_.back());
    case kMemoize: return memo_put(memo_.size());
    case kBinPut: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t i, read_le(1)); return memo_put(i); }
    case kLongBinPut: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t i, read_le(4)); return memo_put(i); }
    case kBinGet: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t i, read_le(1)); return memo_get(i); }
    case kLongBinGet: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t i, read_le(4)); return memo_get(i); }
    default: break;
  }
  if (const char* name = object_opcode_name(op)) {
    return Status::invalid(where_ + ": a pickle that names Python objects (opcode " + name + " at byte " + std::to_string(op_at_) +
                           ") is not a memory snapshot (allowed: torch.cuda.memory._dump_snapshot's output)");
  }
  return step_container(op);
}

Status Parser::step_container(uint8_t op) {
  switch (op) {
    case kEmptyList: return push_container(Kind::kList, {});
    case kEmptyDict: return push_container(Kind::kDict, {});
    case kEmptyTuple: return push_container(Kind::kTuple, {});
    case kTuple1: case kTuple2: case kTuple3: {
      SPPLAN_ASSIGN_OR_RETURN(std::vector<ValueId> items, pop_n(op - kTuple1 + 1u));
      return push_container(Kind::kTuple, std::move(items));
    }
    case kTuple: {
      SPPLAN_ASSIGN_OR_RETURN(std::vector<ValueId> items, pop_mark());
      return push_container(Kind::kTuple, std::move(items));
    }
    case kAppend: { SPPLAN_ASSIGN_OR_RETURN(const ValueId v, pop()); return append({v}, Kind::kList, "APPEND"); }
    case kAppends: { SPPLAN_ASSIGN_OR_RETURN(std::vector<ValueId> items, pop_mark()); return append(std::move(items), Kind::kList, "APPENDS"); }
    case kSetItem: {
      SPPLAN_ASSIGN_OR_RETURN(const ValueId value, pop());
      SPPLAN_ASSIGN_OR_RETURN(const ValueId key, pop());
      return append({key, value}, Kind::kDict, "SETITEM");
    }
    case kSetItems: { SPPLAN_ASSIGN_OR_RETURN(std::vector<ValueId> items, pop_mark()); return append(std::move(items), Kind::kDict, "SETITEMS"); }
    default: return step_scalar(op);
  }
}

Status Parser::step_scalar(uint8_t op) {
  switch (op) {
    case kNone: return push_new(Kind::kNone, 0);
    case kNewTrue: return push_new(Kind::kBool, 1);
    case kNewFalse: return push_new(Kind::kBool, 0);
    case kBinInt: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t v, read_le(4)); return push_new(Kind::kInt, static_cast<int32_t>(v)); }
    case kBinInt1: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t v, read_le(1)); return push_new(Kind::kInt, static_cast<int64_t>(v)); }
    case kBinInt2: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t v, read_le(2)); return push_new(Kind::kInt, static_cast<int64_t>(v)); }
    case kLong1: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(1)); return push_long(n); }
    case kLong4: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(4)); return push_long(n); }
    case kBinFloat: return push_float();
    case kShortBinUnicode: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(1)); return push_text(Kind::kStr, n); }
    case kBinUnicode: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(4)); return push_text(Kind::kStr, n); }
    case kBinUnicode8: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(8)); return push_text(Kind::kStr, n); }
    case kShortBinBytes: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(1)); return push_text(Kind::kBytes, n); }
    case kBinBytes: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(4)); return push_text(Kind::kBytes, n); }
    case kBinBytes8: { SPPLAN_ASSIGN_OR_RETURN(const uint64_t n, read_le(8)); return push_text(Kind::kBytes, n); }
    default:
      return fail(op_at_, "opcode " + hex_byte(op) + ", not one a plain-data pickle uses",
                  "the opcodes pickle protocols 2 to 5 write for dict, list, tuple, str, bytes, int, float, bool, None");
  }
}

Result<Document> parse_pickle(const std::string& where, std::string_view bytes) { return Parser(where, bytes).run(); }

}  // namespace spplan::check::pickle
