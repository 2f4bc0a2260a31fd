#include "planner/config/config_keys.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace spplan {
namespace {

const std::string kPath = "c.json";

// Whole numbers: JSON text's unsigned and a TOML table's signed both count; absent is the fallback,
// or missing where the key is required; 2^64 - 1 must not wrap to -1.
TEST(ConfigKeys, WholeNumbersAndTheirBounds) {
  const nlohmann::json j = {{"unsigned", 8192u},
                            {"signed", int64_t{7}},
                            {"zero", 0},
                            {"huge", std::numeric_limits<uint64_t>::max()},
                            {"float", 2.0},
                            {"null", nullptr}};
  const ConfigKeys keys(kPath, j);
  int64_t out = -5;
  ASSERT_TRUE(keys.whole("unsigned", -1, 10000, &out).is_ok());
  EXPECT_EQ(out, 8192);
  ASSERT_TRUE(keys.whole("signed", -1, 10, &out).is_ok());
  EXPECT_EQ(out, 7);
  ASSERT_TRUE(keys.whole("null", 3, 10, &out).is_ok());
  EXPECT_EQ(out, 3);
  EXPECT_EQ(keys.whole("absent", -1, 10, &out).message(), "c.json: key \"absent\": missing (required)");
  EXPECT_EQ(keys.whole("zero", -1, 10, &out).message(),
            "c.json: key \"zero\": value 0 is not allowed (allowed: a whole number from 1 to 10)");
  EXPECT_EQ(keys.whole("huge", -1, 10, &out).message(),
            "c.json: key \"huge\": value 18446744073709551615 is not allowed (allowed: a whole number from 1 to 10)");
  EXPECT_FALSE(keys.whole("float", -1, 10, &out).is_ok());
  EXPECT_FALSE(keys.whole("unsigned", -1, 8191, &out).is_ok());
  ASSERT_TRUE(keys.count("zero", 4, 10, &out).is_ok());
  EXPECT_EQ(out, 0);
  ASSERT_TRUE(keys.count("absent", 4, 10, &out).is_ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(keys.count("signed", 0, 5, &out).message(),
            "c.json: key \"signed\": value 7 is not allowed (allowed: a whole number from 0 to 5)");
}

// Numbers, flags and strings keep *out when absent or null and refuse another type.
TEST(ConfigKeys, NumbersFlagsAndTextKeepTheirValueWhenAbsent) {
  const nlohmann::json j = {{"eps", 1e-6}, {"flag", true}, {"name", "qwen"}, {"one", 1}, {"null", nullptr}};
  const ConfigKeys keys(kPath, j);
  double number = 9;
  ASSERT_TRUE(keys.number("eps", 0, 1, &number).is_ok());
  EXPECT_EQ(number, 1e-6);
  ASSERT_TRUE(keys.number("null", 0, 1, &number).is_ok());
  EXPECT_EQ(number, 1e-6);
  EXPECT_EQ(keys.number("name", 0, 1, &number).message(),
            "c.json: key \"name\": value \"qwen\" is not allowed (allowed: a number from 0 to 1)");
  bool flag = false;
  ASSERT_TRUE(keys.flag("flag", &flag).is_ok());
  EXPECT_TRUE(flag);
  ASSERT_TRUE(keys.flag("absent", &flag).is_ok());
  EXPECT_TRUE(flag);
  EXPECT_EQ(keys.flag("one", &flag).message(), "c.json: key \"one\": value 1 is not allowed (allowed: true, false)");
  std::string text = "kept";
  ASSERT_TRUE(keys.text("absent", &text).is_ok());
  EXPECT_EQ(text, "kept");
  ASSERT_TRUE(keys.text("name", &text).is_ok());
  EXPECT_EQ(text, "qwen");
  EXPECT_EQ(keys.text("eps", &text).message(), "c.json: key \"eps\": value 1e-06 is not allowed (allowed: a string)");
}

// A nested object's keys are named from the top; an absent or non-object one reads as all absent.
TEST(ConfigKeys, NestedObjectsNameTheirKeysFromTheTop) {
  const nlohmann::json j = {{"text_config", {{"model_type", "llama"}, {"rope_scaling", {{"factor", -2}}}}},
                            {"vision_config", 3}};
  const ConfigKeys top(kPath, j);
  const ConfigKeys text = top.nested("text_config");
  EXPECT_EQ(text.model_type(), "llama");
  double factor = 0;
  EXPECT_EQ(text.nested("rope_scaling").number("factor", 1, 10, &factor).message(),
            "c.json: key \"text_config.rope_scaling.factor\": value -2 is not allowed (allowed: a number from 1 to 10)");
  const ConfigKeys vision = top.nested("vision_config");
  EXPECT_FALSE(vision.present("model_type"));
  EXPECT_EQ(vision.model_type(), "");
  int64_t width = 0;
  ASSERT_TRUE(vision.whole("hidden_size", 768, 100000, &width).is_ok());
  EXPECT_EQ(width, 768);
  EXPECT_EQ(top.nested("absent").say("k", "missing (required by X)").message(),
            "c.json: key \"absent.k\": missing (required by X)");
}

// A long value is cut short in a message: a nested object can be arbitrarily long.
TEST(ConfigKeys, LongValuesAreCutShort) {
  const nlohmann::json long_list = nlohmann::json(std::vector<int>(100, 1));
  const nlohmann::json j = {{"layers", long_list}};
  const ConfigKeys keys(kPath, j);
  const std::string message = keys.refuse("layers", long_list, "is not priced", "absent").message();
  EXPECT_EQ(message, "c.json: key \"layers\": value " + long_list.dump().substr(0, 60) + "... is not priced (allowed: absent)");
}

}  // namespace
}  // namespace spplan
