// engine/io/safetensors.hpp: the writer's files read back exactly; BF16 and F16 convert to the
// floats their bits mean; a table of broken files is refused, each naming the file and the tensor.
#include "engine/io/safetensors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "run_helpers.hpp"

namespace spplan::engine::testing {
namespace {

// A safetensors file from a header text and `data_bytes` bytes of `fill`.
std::string file_bytes(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((uint64_t{header.size()} >> (8 * k)) & 0xff);
  return out + header + data;
}

TEST(Safetensors, WrittenFileReadsBack) {
  const std::string dir = fresh_dir("st_roundtrip");
  const std::vector<float> a{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.125f}, b{42.0f};
  ASSERT_TRUE(write_safetensors(dir + "/m.safetensors", {{"a.weight", {2, 3}, a.data()}, {"b", {1}, b.data()}},
                                {{"format", "pt"}}));
  Result<SafetensorsFile> f = SafetensorsFile::open(dir + "/m.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->metadata().at("format"), "pt");
  ASSERT_EQ(f->tensors().size(), 2u);
  const StTensorView& t = f->tensors()[0];
  EXPECT_EQ(t.name, "a.weight");
  EXPECT_EQ(t.dtype, "F32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  std::vector<float> got(4);
  convert_to_f32(t, 2, 4, got.data());  // a range from the middle: what a ZeRO-3 rank reads
  EXPECT_EQ(got, std::vector<float>(a.begin() + 2, a.end()));
  EXPECT_FALSE(std::filesystem::exists(dir + "/m.safetensors.tmp-" + std::to_string(::getpid())));
}

// --export-dtype bf16: rounded to nearest even as torch rounds (bit patterns worked by hand), and
// what is written reads back as those values.
TEST(Safetensors, WritesBf16RoundedToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(bf16_bits(1.00390625f), 0x3f80);  // 1 + 2^-8: exactly half way, ties to the even 0x3f80
  EXPECT_EQ(bf16_bits(1.01171875f), 0x3f82);  // 1 + 3 * 2^-8: half way, ties to the even 0x3f82
  EXPECT_EQ(bf16_bits(1.0f + 1.0f / 128 + 1.0f / 4096), 0x3f81);  // above half way: rounds up
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7fc0, 0x7fc0);
  const std::string dir = fresh_dir("st_bf16");
  const std::vector<float> a{1.0f, -2.0f, 1.01171875f, 0.5f};
  ASSERT_TRUE(write_safetensors(dir + "/m.safetensors", {{"a", {4}, a.data()}}, {{"format", "pt"}}, true));
  Result<SafetensorsFile> f = SafetensorsFile::open(dir + "/m.safetensors");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->tensors()[0].dtype, "BF16");
  std::vector<float> got(4);
  convert_to_f32(f->tensors()[0], 0, 4, got.data());
  EXPECT_EQ(got, (std::vector<float>{1.0f, -2.0f, 1.015625f, 0.5f}));
}

TEST(Safetensors, Bf16AndF16ConvertToTheirValues) {
  // BF16 0x3f80 = 1, 0xc000 = -2; F16 0x3c00 = 1, 0x0001 = 2^-24 (subnormal), 0xfc00 = -inf.
  const std::string header = R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[4,10]},)"
                             R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";
  const std::string data("\x80\x3f\x00\xc0\x00\x3c\x01\x00\x00\xfc", 10);
  const std::string path = write_file(fresh_dir("st_convert"), "m.safetensors", file_bytes(header, data));
  Result<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  float b[2], h[3];
  for (const StTensorView& t : f->tensors()) convert_to_f32(t, 0, t.numel(), t.name == "b" ? b : h);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], -2.0f);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[2], -std::numeric_limits<float>::infinity());
}

TEST(Safetensors, BrokenFilesAreRefusedNamingTheTensor) {
  struct Case {
    std::string bytes, expected;
  };
  const std::string ok_data(8, '\0');
  const std::vector<Case> cases = {
      {"abc", "shorter than the 8-byte header length"},
      {std::string("\xff\xff\x00\x00\x00\x00\x00\x00", 8) + "{}", "header length 65535 does not fit the file"},
      {file_bytes("not json", ""), "header is not a JSON object"},
      {file_bytes(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", ok_data), "tensor \"w\": lacks a dtype"},
      {file_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", ok_data),
       "tensor \"w\": data_offsets [0,16] lie outside the 8 data bytes"},
      {file_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", ok_data),
       "tensor \"w\": data_offsets [0,8] hold 8 bytes, shape and dtype need 12"},
      {file_bytes(R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", ok_data), "tensor \"w\": unknown dtype \"Q4\""},
      // A metadata value nested 100,000 deep: refused in one line, not dumped (which overflowed the stack).
      {file_bytes(R"({"__metadata__":{"format":)" + std::string(100000, '[') + std::string(100000, ']') + "}}", ""),
       "__metadata__ value of \"format\" is not a string"},
  };
  const std::string dir = fresh_dir("st_broken");
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = write_file(dir, "c" + std::to_string(i) + ".safetensors", cases[i].bytes);
    const Result<SafetensorsFile> f = SafetensorsFile::open(path);
    ASSERT_FALSE(f.ok()) << cases[i].expected;
    EXPECT_EQ(f.status().message().rfind(path, 0), 0u) << f.status().message();  // the file comes first
    EXPECT_NE(f.status().message().find(cases[i].expected), std::string::npos)
        << "expected: " << cases[i].expected << "\nfound: " << f.status().message();
  }
}

}  // namespace
}  // namespace spplan::engine::testing
