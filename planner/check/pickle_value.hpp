// A bounded reader of Python pickles that hold plain data only: dicts, lists, tuples, str, bytes,
// int, float, bool and None, as pickle protocols 2 to 5 write them (the opcodes are Python's
// Lib/pickletools.py's). It exists to read torch.cuda.memory._dump_snapshot's file without Python.
// A pickle that names a Python object (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
// PERSID, EXT*) is refused, never resolved: those are how a pickle runs code when Python loads it.
// Every read is checked against the buffer's end, and the values, references, stack, marks, memo
// and string lengths are bounded, so any byte string parses or fails in one line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan::check::pickle {

enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kStr, kBytes, kList, kTuple, kDict };

// Values live in the Document and are named by index; memo references share a value, as Python's do.
using ValueId = uint32_t;

// The bounds: far above torch's snapshot of a long trace (some KB an entry, the file at most
// kMaxRunLogBytes), far below what a crafted file could make a reader allocate.
inline constexpr size_t kMaxValues = size_t{1} << 24;      // values made (16 bytes each)
inline constexpr size_t kMaxReferences = size_t{1} << 25;  // items put into containers, all together
inline constexpr size_t kMaxStack = size_t{1} << 20;       // the unpickler's stack
inline constexpr size_t kMaxMarks = 64;                    // open MARKs: how deep a literal nests
inline constexpr size_t kMaxDepth = 64;                    // a container inside containers
inline constexpr size_t kMaxTextBytes = size_t{64} << 20;  // one str or bytes

class Document {
 public:
  ValueId root() const { return root_; }
  Kind kind(ValueId v) const { return nodes_[v].kind; }
  // REQUIRES: kind(v) is kInt or kBool.
  int64_t int_value(ValueId v) const { return nodes_[v].number; }
  // REQUIRES: kind(v) is kFloat.
  double float_value(ValueId v) const;
  // REQUIRES: kind(v) is kStr or kBytes.
  const std::string& text(ValueId v) const { return texts_[static_cast<size_t>(nodes_[v].number)]; }
  // The items of a list or tuple; of a dict, key and value interleaved in insertion order.
  // REQUIRES: kind(v) is kList, kTuple or kDict.
  const std::vector<ValueId>& items(ValueId v) const { return containers_[static_cast<size_t>(nodes_[v].number)]; }
  // The value of the str key `key` in dict `v` (the last one set, as Python keeps); nullopt when
  // `v` is not a dict or has no such key.
  std::optional<ValueId> get(ValueId v, std::string_view key) const;

 private:
  friend class Parser;
  struct Node {
    Kind kind;
    uint8_t depth;   // containers below this one, counted as items went in
    int64_t number;  // the int, the double's bits, or the index into texts_ / containers_
  };
  std::vector<Node> nodes_;
  std::vector<std::string> texts_;
  std::vector<std::vector<ValueId>> containers_;
  ValueId root_ = 0;
};

// The pickle in `bytes` (what follows its STOP is ignored, as pickle.loads does). Fails in one
// line naming `where`, the byte offset, what was found there and what is allowed.
Result<Document> parse_pickle(const std::string& where, std::string_view bytes);

// A kind's name for messages ("dict", "int", ...).
const char* kind_name(Kind kind);

}  // namespace spplan::check::pickle
