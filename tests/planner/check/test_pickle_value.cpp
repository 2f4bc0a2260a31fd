// The plain-data pickle reader: values as pickle writes them, and a table of pickles it refuses in
// one line (objects named, truncation, bad structure, and the bounds on nesting, marks and stack).
#include <gtest/gtest.h>

#include <string>

#include "planner/check/pickle_value.hpp"
#include "tests/planner/check/pickle_bytes.hpp"

namespace {

using namespace spplan::check::pickle;  // NOLINT: the test names the reader's kinds throughout
using namespace spplan::check::pickle_bytes;  // NOLINT

const std::string kProto4("\x80\x04", 2);

TEST(PickleValue, ReadsEachPlainKind) {
  // {"ints": [255, 65535, -2, 2^40, -2^40], "x": 3.5, "t": (True, False, None), "b": b"xy", "s": "long..."}
  const std::string long_text(300, 'z');  // over 255 bytes: BINUNICODE, a 4-byte length
  const std::string bytes = whole(dict({
      {"ints", list({"K\xff", "M\xff\xff", integer(-2), "\x8a\x06" + le(uint64_t{1} << 40, 6),
                     "\x8a\x06" + le(0xff0000000000ULL, 6)})},
      {"x", "G" + std::string("\x40\x0c\x00\x00\x00\x00\x00\x00", 8)},  // 3.5, big-endian
      {"t", std::string("\x88\x89N\x87", 4)},                              // NEWTRUE NEWFALSE NONE TUPLE3
      {"b", "C\x02xy"},
      {"s", "X" + le(long_text.size(), 4) + long_text},
  }));
  const auto doc = parse_pickle("v.pickle", bytes);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const ValueId root = doc->root();
  ASSERT_EQ(doc->kind(root), Kind::kDict);
  const std::vector<ValueId>& ints = doc->items(*doc->get(root, "ints"));
  ASSERT_EQ(ints.size(), 5u);
  EXPECT_EQ(doc->int_value(ints[0]), 255);
  EXPECT_EQ(doc->int_value(ints[1]), 65535);
  EXPECT_EQ(doc->int_value(ints[2]), -2);
  EXPECT_EQ(doc->int_value(ints[3]), int64_t{1} << 40);
  EXPECT_EQ(doc->int_value(ints[4]), -(int64_t{1} << 40));
  EXPECT_EQ(doc->float_value(*doc->get(root, "x")), 3.5);
  const std::vector<ValueId>& t = doc->items(*doc->get(root, "t"));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(doc->kind(t[0]), Kind::kBool);
  EXPECT_EQ(doc->int_value(t[0]), 1);
  EXPECT_EQ(doc->int_value(t[1]), 0);
  EXPECT_EQ(doc->kind(t[2]), Kind::kNone);
  EXPECT_EQ(doc->kind(*doc->get(root, "b")), Kind::kBytes);
  EXPECT_EQ(doc->text(*doc->get(root, "b")), "xy");
  EXPECT_EQ(doc->text(*doc->get(root, "s")), long_text);
  EXPECT_FALSE(doc->get(root, "absent"));
  EXPECT_FALSE(doc->get(ints[0], "ints"));  // not a dict
}

TEST(PickleValue, MemoSharesAValueAndALaterKeyReplaces) {
  // [d, d] where d = {"k": 1, "k": 2}: MEMOIZE then BINGET 1 (entry 0 is the list).
  const std::string bytes = kProto4 + "]\x94(}\x94(" + str("k") + "K\x01" + str("k") + "K\x02uh\x01" + "e.";
  const auto doc = parse_pickle("m.pickle", bytes);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const std::vector<ValueId>& items = doc->items(doc->root());
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0], items[1]);
  EXPECT_EQ(doc->int_value(*doc->get(items[0], "k")), 2);
}

TEST(PickleValue, RefusesInOneLineNamingTheByte) {
  const std::string allowed_plain = " (allowed: a pickle Python's pickle.dumps writes)";
  const std::string objects = ") is not a memory snapshot (allowed: torch.cuda.memory._dump_snapshot's output)";
  const struct {
    std::string name, bytes, message;  // message after "x.pickle: "
  } cases[] = {
      {"global", std::string("\x80\x02" "cos\nsystem\n(S'ls'\ntR."), "a pickle that names Python objects (opcode GLOBAL at byte 2" + objects},
      {"stack_global", kProto4 + str("os") + str("system") + "\x93" + "N\x85R.", "a pickle that names Python objects (opcode STACK_GLOBAL at byte 14" + objects},
      {"reduce", kProto4 + "N)R.", "a pickle that names Python objects (opcode REDUCE at byte 4" + objects},
      {"build", kProto4 + "}Nb.", "a pickle that names Python objects (opcode BUILD at byte 4" + objects},
      {"persid", kProto4 + "N\x51.", "a pickle that names Python objects (opcode BINPERSID at byte 3" + objects},
      {"protocol1", std::string("\x80\x01N.", 4), "byte 0: pickle protocol 1 (allowed: protocols 2 to 5)"},
      {"no_stop", kProto4 + "N", "byte 3: ends without STOP (allowed: a whole pickle, its last opcode STOP)"},
      {"short_string", kProto4 + "X" + le(65535, 4) + "ab.",
       "byte 2: truncated: the opcode needs 65535 more bytes, 3 are left (allowed: a whole pickle)"},
      {"short_int", kProto4 + "J\x01", "byte 2: truncated: the opcode needs 4 more bytes, 1 are left (allowed: a whole pickle)"},
      {"empty_stop", kProto4 + ".", "byte 2: STOP with nothing on the stack (allowed: a pickle of one value)"},
      {"memo", kProto4 + "h\x05.", "byte 2: a memo get of entry 5, never put" + allowed_plain},
      {"append_alone", kProto4 + "Na.", "byte 3: APPEND with no list below its items" + allowed_plain},
      {"append_tuple", kProto4 + ")Na.", "byte 4: APPEND into a tuple, not a list" + allowed_plain},
      {"odd_setitems", kProto4 + "}(Nu.", "byte 5: SETITEMS with a key and no value" + allowed_plain},
      {"no_mark", kProto4 + "e.", "byte 2: an opcode that takes the items above a MARK with no MARK open" + allowed_plain},
      {"tuple2", kProto4 + "N\x86.", "byte 3: a TUPLE2 with fewer values on the stack" + allowed_plain},
      {"wide_int", kProto4 + "\x8a\x09" + std::string(9, '\x01') + ".", "byte 2: an integer of 9 bytes (a memory snapshot's fit in 8)" + allowed_plain},
      {"set", kProto4 + "\x8f.",
       "byte 2: opcode 0x8f, not one a plain-data pickle uses (allowed: the opcodes pickle protocols 2 to 5 write for "
       "dict, list, tuple, str, bytes, int, float, bool, None)"},
      {"marks", kProto4 + std::string(65, '('), "byte 66: more than 64 open MARKs" + allowed_plain},
      // 70 lists on the stack, each appended into the one below: the 65th APPEND nests 65 deep.
      {"nested", kProto4 + std::string(70, ']') + std::string(69, 'a') + ".", "byte 136: containers nested more than 64 deep" + allowed_plain},
      // A list appended into itself 65 times: a cycle, whose depth grows each time.
      {"cycle", kProto4 + "]\x94" + [] { std::string s; for (int i = 0; i < 65; ++i) s += std::string("h\x00" "a", 3); return s; }() + ".",
       "byte 198: containers nested more than 64 deep" + allowed_plain},
      {"stack", kProto4 + std::string((size_t{1} << 20) + 1, 'N') + ".", "byte 1048578: a stack deeper than 1048576" + allowed_plain},
  };
  for (const auto& c : cases) {
    const auto doc = parse_pickle("x.pickle", c.bytes);
    ASSERT_FALSE(doc.ok()) << c.name;
    EXPECT_EQ(doc.status().message(), "x.pickle: " + c.message) << c.name;
  }
}

}  // namespace
