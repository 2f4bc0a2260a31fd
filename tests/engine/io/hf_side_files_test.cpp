// engine/io/hf_side_files.hpp: the Hugging Face files carried from --init-from through checkpoints
// to --export-hf, and config.json written back with only its dtype changed.
#include "engine/io/hf_side_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "run_helpers.hpp"

namespace spplan::engine {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(HfSideFiles, TheFilesPresentAreReadAndCarriedAsBlobs) {
  const std::string dir = testing::fresh_dir("hf_side_in");
  testing::write_file(dir, "config.json", "{\"bos_token_id\": 1}");
  testing::write_file(dir, "generation_config.json", "{\"do_sample\": true}");
  testing::write_file(dir, "tokenizer.json", "{}");
  testing::write_file(dir, "model.safetensors", "weights are not side files");
  const auto files = read_hf_side_files(dir);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 3u);
  // Through a checkpoint's blobs and back.
  std::map<std::string, std::string> blobs;
  for (const BlobRef& b : hf_side_file_blobs(*files)) blobs[b.name] = std::string(static_cast<const char*>(b.data), b.bytes);
  EXPECT_EQ(blobs.count("hf.generation_config.json"), 1u);
  blobs["params.f32"] = "not a side file";
  EXPECT_EQ(hf_side_files_of(blobs), *files);
  const std::string out = testing::fresh_dir("hf_side_out");
  ASSERT_TRUE(write_hf_side_files(out, *files).is_ok());
  EXPECT_EQ(read_text(out + "/generation_config.json"), "{\"do_sample\": true}");
  EXPECT_EQ(read_text(out + "/tokenizer.json"), "{}");
  EXPECT_FALSE(std::filesystem::exists(out + "/config.json"));  // written with the weights (write_hf_folder)
}

// Only the dtype changes: bos/eos ids, max_position_embeddings and keys the engine never reads stay.
TEST(HfSideFiles, ExportedConfigChangesOnlyTheDtype) {
  const std::string original =
      R"({"bos_token_id": 1, "eos_token_id": [2, 3], "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
          "rope_theta": 500000.0, "custom_key": {"kept": true}})";
  const auto bf16 = exported_config(original, nlohmann::json{{"from_spec", true}}, true);
  ASSERT_TRUE(bf16.ok());
  const nlohmann::json j = nlohmann::json::parse(*bf16);
  nlohmann::json expected = nlohmann::json::parse(original);
  expected.erase("torch_dtype");
  expected["dtype"] = "bfloat16";
  EXPECT_EQ(j, expected);
  const auto fp32 = exported_config("", nlohmann::json{{"from_spec", true}}, false);
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(nlohmann::json::parse(*fp32), (nlohmann::json{{"from_spec", true}, {"dtype", "float32"}}));
  EXPECT_FALSE(exported_config("[1, 2]", nlohmann::json::object(), false).ok());
  // --export-trained-length raises max_position_embeddings to the trained length, never lowers it.
  const auto longer = exported_config(original, nlohmann::json::object(), false, 16384);
  ASSERT_TRUE(longer.ok());
  EXPECT_EQ(nlohmann::json::parse(*longer)["max_position_embeddings"], 16384);
  const auto shorter = exported_config(original, nlohmann::json::object(), false, 2048);
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ(nlohmann::json::parse(*shorter)["max_position_embeddings"], 4096);
}

}  // namespace
}  // namespace spplan::engine
