// A config.json's model is named by model_name.hpp's rule (issue 40).
#include <gtest/gtest.h>

#include <string>

#include "planner/config/model_name.hpp"

namespace spplan {
namespace {

const std::string kHash = "0123456789abcdef0123456789abcdef01234567";  // a snapshot's commit

// model_name.hpp's rule, one row per case it names.
TEST(ModelName, RuleTable) {
  const struct {
    std::string config_path, name, name_or_path, expected;
  } cases[] = {
      // 1. A name key wins: someone chose it.
      {"/w/my-llama/config.json", "tiny", "Qwen/Qwen3-8B", "tiny"},
      // 2. _name_or_path: a Hub id whole, a local path by its last meaningful folder.
      {"/w/my-llama/config.json", "", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
      {"/w/my-llama/config.json", "", "gpt2", "gpt2"},
      {"/w/my-llama/config.json", "", "/data/models/Llama-3.1-8B", "Llama-3.1-8B"},
      {"/w/my-llama/config.json", "", "/data/models/Llama-3.1-8B/", "Llama-3.1-8B"},
      {"/w/my-llama/config.json", "", "~/Qwen3-8B", "Qwen3-8B"},
      {"/w/my-llama/config.json", "", "./out/checkpoint-500", "out"},
      {"/w/my-llama/config.json", "", "out/checkpoint-500", "out"},  // a relative path, not a Hub id
      {"/w/my-llama/config.json", "", "C:\\Users\\me\\Qwen3-8B", "Qwen3-8B"},
      {"/w/my-llama/config.json", "", "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/" + kHash,
       "Qwen/Qwen3-8B"},
      // ... and a path that names nothing goes on to the folders.
      {"/w/my-llama/config.json", "", "model", "my-llama"},
      {"/w/my-llama/config.json", "", "/model/", "my-llama"},
      // 3. The folders, nearest first, skipping names that say nothing about the model.
      {"/w/my-llama/config.json", "", "", "my-llama"},
      {"/w/my-llama/model/config.json", "", "", "my-llama"},
      {"/w/my-llama/Model/config.json", "", "", "my-llama"},
      {"/w/my-llama/models/model/config.json", "", "", "my-llama"},
      {"/w/run-7/checkpoint-500/config.json", "", "", "run-7"},
      {"/w/checkpoint-best/config.json", "", "", "checkpoint-best"},  // not the Trainer's numbered one
      {"/w/deadbeef/config.json", "", "", "deadbeef"},                // too short for a commit hash
      {"/h/hub/models--Qwen--Qwen3-8B/snapshots/" + kHash + "/config.json", "", "", "Qwen/Qwen3-8B"},
      {"/h/hub/models--gpt2/snapshots/" + kHash + "/config.json", "", "", "gpt2"},
      {"/w/a/../my-llama/./config.json", "", "", "my-llama"},
      // 4. Every folder skipped: the file's stem.
      {"/model/config.json", "", "", "config"},
      {"/config.json", "", "", "config"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(config_model_name(c.config_path, c.name, c.name_or_path), c.expected)
        << c.config_path << " name=" << c.name << " _name_or_path=" << c.name_or_path;
  }
}

}  // namespace
}  // namespace spplan
