// config.json files written to break the reader: nesting deeper than any walk's stack, values
// longer than any message, a model named after a folder whose name is not UTF-8. Each must give one
// short line or a plan that writes and reads back, never a crash (SIGSEGV on a 100,000-deep array;
// nlohmann's type_error 316 on a Latin-1 name).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "planner/config/config_keys.hpp"
#include "planner/config/json_file.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/utf8_text.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

using testing_scratch::ScratchDir;

// A config.json the costmodel prices (tests/planner/config/data/config.json's Qwen3 shapes), with
// `extra` keys inserted before the last one.
std::string qwen3_config(const std::string& extra) {
  return R"({"model_type": "qwen3", "hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, )" +
         extra + R"("vocab_size": 151936})";
}

// [1,1,...,1], `count` ones.
std::string ones_array(int count) {
  std::string text = "[1";
  for (int i = 1; i < count; ++i) text += ",1";
  return text + "]";
}

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

void expect_one_short_line(const Status& s, size_t max_chars = 400) {
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_LE(s.message().size(), max_chars) << s.message();
  EXPECT_TRUE(is_utf8(s.message())) << s.message();
}

// 100,000 levels is about 200 KB: the file any walk that recurses once a level (dump(), a copy)
// overflowed the stack on. Refused in one line right after the parse, naming the top-level key.
TEST(HostileJson, DeepNestingIsRefusedInOneLine) {
  const ScratchDir dir("hostile_deep");
  const struct {
    std::string text, expected;
  } cases[] = {
      {qwen3_config(R"("hidden_act": )" + nested_arrays(100000) + ", "),
       ": key \"hidden_act\": objects and arrays nested more than 64 deep (allowed: at most 64 levels, the top-level "
       "object counted)"},
      {qwen3_config(R"("quantization_config": {"a": )" + nested_arrays(100) + "}, "),
       ": key \"quantization_config\": objects and arrays nested more than 64 deep (allowed: at most 64 levels, the "
       "top-level object counted)"},
      {nested_arrays(100000), ": objects and arrays nested more than 64 deep (allowed: at most 64 levels, the top-level "
                              "object counted)"},
      {std::string(100000, '['), ": objects and arrays nested more than 64 deep (allowed: at most 64 levels, the "
                                 "top-level object counted)"},  // not closed: refused for depth all the same
  };
  for (const auto& c : cases) {
    const std::string path = write(dir.path() + "/m/config.json", c.text);
    const auto m = load_model(path);
    ASSERT_FALSE(m.ok()) << c.expected;
    expect_one_short_line(m.status());
    EXPECT_EQ(m.status().message(), path + c.expected);
  }
}

// A key is given twice only within one object: 100,000 objects in an array each with the same key
// are read (nlohmann's callback parser, which this reader no longer uses, took seconds on them),
// a repeat inside one of them is refused.
TEST(HostileJson, KeysGivenTwiceAreThoseOfOneObject) {
  const ScratchDir dir("hostile_keys");
  std::string objects = "[";
  for (int i = 0; i < 100'000; ++i) objects += i == 0 ? R"({"x": 1})" : R"(, {"x": 1})";
  const auto wide = load_model(write(dir.path() + "/a/config.json", qwen3_config(R"("w": )" + objects + "], ")));
  EXPECT_TRUE(wide.ok()) << wide.status().message();
  const std::string path = write(dir.path() + "/b/config.json", qwen3_config(R"("w": [{"x": 1}, {"y": 1, "y": 2}], )"));
  const auto repeated = load_model(path);
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().message(), path + ": key \"y\": given twice in one object (allowed: each key once)");
}

// 64 levels, the top-level object counted, is read; the value quoted by a refusal shows a few.
TEST(HostileJson, NestingUpToTheLimitIsRead) {
  const ScratchDir dir("hostile_limit");
  const auto deep_unused = load_model(write(dir.path() + "/a/config.json", qwen3_config(R"("x": )" + nested_arrays(63) + ", ")));
  EXPECT_TRUE(deep_unused.ok()) << deep_unused.status().message();
  const auto deep_refused =
      load_model(write(dir.path() + "/b/config.json", qwen3_config(R"("hidden_act": )" + nested_arrays(63) + ", ")));
  ASSERT_FALSE(deep_refused.ok());
  EXPECT_EQ(deep_refused.status().message(),
            dir.path() + "/b/config.json: key \"hidden_act\": value [[[[[[[[[...]]]]]]]]] is an MLP spplan cannot "
                         "price (allowed: \"silu\", or a gelu in a Gemma config)");
}

// A refusal quotes 60 characters of the value, whatever its length.
TEST(HostileJson, LongValuesAreQuotedShort) {
  const ScratchDir dir("hostile_long");
  const std::string path = dir.path() + "/m/config.json";
  const struct {
    std::string value, quoted;
  } cases[] = {
      {'"' + std::string(1'000'000, 'g') + '"', '"' + std::string(59, 'g') + "..."},
      {ones_array(100'000), ones_array(100).substr(0, 60) + "..."},
      {R"({"a\nb": "x\"y", "c": [true, null, 1.5]})", R"({"a\nb":"x\"y","c":[true,null,1.5]})"},
  };
  for (const auto& c : cases) {
    const auto m = load_model(write(path, qwen3_config(R"("hidden_act": )" + c.value + ", ")));
    ASSERT_FALSE(m.ok());
    expect_one_short_line(m.status());
    EXPECT_EQ(m.status().message(), path + ": key \"hidden_act\": value " + c.quoted +
                                        " is an MLP spplan cannot price (allowed: \"silu\", or a gelu in a Gemma config)");
  }
}

// short_dump never throws: a byte that is not UTF-8 (which nlohmann's dump() throws type_error 316
// on) is shown \xNN; a UTF-8 character is not cut in half; containers deeper than 8 are [...].
TEST(HostileJson, ShortDumpShowsAnyValue) {
  const struct {
    nlohmann::json value;
    std::string shown;
  } cases[] = {
      {"mod\xe8le", "\"mod\\xe8le\""},
      {nlohmann::json::object({{"k\xff", "\x01"}}), "{\"k\\xff\":\"\\u0001\"}"},
      {std::string(58, 'a') + "\xc3\xa8\xc3\xa8", "\"" + std::string(58, 'a') + "..."},  // the è at 59..60 whole or not at all
      {nlohmann::json::parse(nested_arrays(10)), "[[[[[[[[[...]]]]]]]]]"},
      {nlohmann::json::parse(nested_arrays(9)), "[[[[[[[[[]]]]]]]]]"},  // the ninth holds nothing to leave out
      {12345, "12345"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(short_dump(c.value), c.shown);
    EXPECT_TRUE(is_utf8(short_dump(c.value)));
  }
}

// What spplan writes as JSON has UTF-8 strings and keys at any depth: dump() threw type_error 316.
TEST(HostileJson, DumpUtf8WritesEveryStringAndKeyAsUtf8) {
  const nlohmann::json j = {{"mod\xe8le", {{"name", "a\xe8"}, {"list", {"ok", "\xff"}}}}, {"fine", "caf\xc3\xa9"}};
  EXPECT_EQ(dump_utf8(j), "{\"fine\":\"caf\xc3\xa9\",\"mod\\\\xe8le\":{\"list\":[\"ok\",\"\\\\xff\"],\"name\":\"a\\\\xe8\"}}");
  EXPECT_EQ(dump_utf8({{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

// A model named after a Latin-1 folder ("mod\xe8le", è in Latin-1): it loads, keeps its bytes, and
// a plan of it writes as UTF-8 TOML (the name's byte as the text \xe8) that reads back.
TEST(HostileJson, ANameThatIsNotUtf8WritesAPlanThatReadsBack) {
  const ScratchDir dir("hostile_name");
  const auto model = load_model(write(dir.path() + "/mod\xe8le/config.json", qwen3_config("")));
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->name, "mod\xe8le");
  auto plan = load_plan(std::string(SPPLAN_SOURCE_DIR) + "/configs/plans/qwen3-4b-128k-4xh100.toml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  plan->model = *model;
  const std::string text = plan_to_toml(*plan);
  EXPECT_TRUE(is_utf8(text));
  EXPECT_NE(text.find("# spplan plan: mod\\xe8le on "), std::string::npos) << text;
  EXPECT_NE(text.find("\nname = \"mod\\\\xe8le\"\n"), std::string::npos) << text;
  const std::string path = dir.path() + "/plan.toml";
  ASSERT_TRUE(write_file_atomically(path, text).is_ok());
  const auto back = load_plan(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->model.name, "mod\\xe8le");
  EXPECT_EQ(back->model.hidden_size, 2560);
}

}  // namespace
}  // namespace spplan
