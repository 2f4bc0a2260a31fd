// A Hugging Face model folder where a model belongs (every HF user has one): it loads as its config.json, a
// folder without one is one line, and a config.json's model is named by model_name.hpp's rule.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "planner/config/loaders.hpp"
#include "planner/config/model_name.hpp"

namespace spplan {
namespace {

namespace fs = std::filesystem;

const std::string kData = SPPLAN_TEST_DATA_DIR;
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
      // 3. A file not named config.json: its stem, unless a name 4 skips.
      {"/w/configs/phi-3-mini.json", "", "", "phi-3-mini"},
      {"/w/my-llama/Config.JSON", "", "", "my-llama"},
      {"/w/my-llama/model.json", "", "", "my-llama"},
      {"/w/my-llama/phi-3-mini.json", "", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},  // 2 first
      // 4. The folders, nearest first, skipping names that say nothing about the model.
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
      // 5. Every folder skipped: the file's stem.
      {"/model/config.json", "", "", "config"},
      {"/config.json", "", "", "config"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(config_model_name(c.config_path, c.name, c.name_or_path), c.expected)
        << c.config_path << " name=" << c.name << " _name_or_path=" << c.name_or_path;
  }
}

// A scratch folder per test process, removed after.
class ModelFolder : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/model_folder." + std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // data/config.json (a Qwen3-4B) with `extra` keys, written to dir_/folder/config.json; the folder.
  std::string write_config(const std::string& folder, const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(kData + "/config.json"));
    j.update(extra);
    fs::create_directories(dir_ + "/" + folder);
    std::ofstream(dir_ + "/" + folder + "/config.json") << j.dump();
    return dir_ + "/" + folder;
  }

  std::string dir_;
};

// The folder, with or without a trailing '/', is its config.json: the same ModelSpec, name included.
TEST_F(ModelFolder, AFolderLoadsAsItsConfigJson) {
  for (const std::string& folder : {kData, kData + "/", kData + "/transformers5", kData + "/transformers5/"}) {
    const auto by_folder = load_model(folder);
    const auto by_file = load_model(kData + folder.substr(kData.size()) + (folder.back() == '/' ? "" : "/") + "config.json");
    ASSERT_TRUE(by_folder.ok()) << folder << ": " << by_folder.status().message();
    ASSERT_TRUE(by_file.ok()) << by_file.status().message();
    EXPECT_EQ(*by_folder, *by_file) << folder;
    EXPECT_EQ(*model_file(folder), (fs::path(folder) / "config.json").string());
  }
  EXPECT_EQ(load_model(kData)->name, "data");
  EXPECT_EQ(load_model(kData)->hidden_size, 2560);
}

// A folder is given as a path, as a file is: a bare name is a preset's wherever the command runs
// (a folder "qwen3-0.6b" here does not shadow the preset); a bare name that is only a folder here
// is refused with the path to write.
TEST_F(ModelFolder, AFolderInTheWorkingDirectoryIsGivenAsAPath) {
  write_config("Qwen3-8B");
  write_config("qwen3-0.6b");  // a preset's name
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  const auto by_path = load_model("./Qwen3-8B");
  const auto by_slash = load_model("Qwen3-8B/");
  const auto by_name = load_model("Qwen3-8B");
  const auto preset = load_model("qwen3-0.6b");
  fs::current_path(before);
  ASSERT_TRUE(by_path.ok()) << by_path.status().message();
  EXPECT_EQ(by_path->name, "Qwen3-8B");
  ASSERT_TRUE(by_slash.ok()) << by_slash.status().message();
  EXPECT_EQ(*by_slash, *by_path);
  EXPECT_EQ(by_name.status().message().rfind("--model: value \"Qwen3-8B\" is not a preset, and a folder is given as a "
                                             "path (allowed: ./Qwen3-8B for the folder here; presets: glm-4.5-air, gpt-oss-120b, gpt-oss-20b, llama-3.1-70b, ",
                                             0),
            0u)
      << by_name.status().message();
  ASSERT_TRUE(preset.ok()) << preset.status().message();
  EXPECT_EQ(preset->hidden_size, 1024);  // the preset's Qwen3-0.6B, not the folder's Qwen3-4B
}

// The names the brief asked for, through real folders: by the folder and by its config.json alike.
TEST_F(ModelFolder, NamesFromKeysAndFolders) {
  const struct {
    std::string folder;
    nlohmann::json keys;
    std::string expected;
  } cases[] = {
      {"qwen-by-id", {{"_name_or_path", "Qwen/Qwen3-8B"}}, "Qwen/Qwen3-8B"},
      {"local-path", {{"_name_or_path", "/data/models/Llama-3.1-8B"}}, "Llama-3.1-8B"},
      {"hub/models--Qwen--Qwen3-8B/snapshots/" + kHash, nlohmann::json::object(), "Qwen/Qwen3-8B"},
      {"my-llama", nlohmann::json::object(), "my-llama"},
      {"my-qwen/model", nlohmann::json::object(), "my-qwen"},
      {"empty-keys", {{"_name_or_path", ""}, {"name", nullptr}}, "empty-keys"},  // transformers' default ""
      {"named", {{"name", "qwen3-4b"}, {"_name_or_path", "/tmp/x"}}, "qwen3-4b"},
  };
  for (const auto& c : cases) {
    const std::string folder = write_config(c.folder, c.keys);
    for (const std::string& arg : {folder, folder + "/config.json"}) {
      const auto m = load_model(arg);
      ASSERT_TRUE(m.ok()) << arg << ": " << m.status().message();
      EXPECT_EQ(m->name, c.expected) << arg;
    }
  }
}

// Bad folders and bad name keys: one line naming the folder or file, the key, what is allowed.
TEST_F(ModelFolder, BadFoldersAndNameKeysAreOneLine) {
  fs::create_directories(dir_ + "/empty");
  fs::create_directories(dir_ + "/odd/config.json");  // a folder where the file belongs
  write_config("number-name", {{"_name_or_path", 5}});
  write_config("list-name", {{"name", nlohmann::json::array({"a"})}});
  const std::string allowed =
      "(allowed: a model preset, a model TOML file, a Hugging Face config.json or a folder holding one)";
  const struct {
    std::string arg, flag, expected;
  } cases[] = {
      {dir_ + "/empty", "--model", "--model: " + dir_ + "/empty: a folder without config.json " + allowed},
      {dir_ + "/empty/", "--model", "--model: " + dir_ + "/empty/: a folder without config.json " + allowed},
      {dir_ + "/empty", "", dir_ + "/empty: a folder without config.json " + allowed},
      {dir_ + "/odd", "--model", dir_ + "/odd/config.json: cannot open (a directory; allowed: a file)"},
      {dir_ + "/number-name", "--model",
       dir_ + "/number-name/config.json: key \"_name_or_path\": value 5 is not allowed (allowed: a string)"},
      {dir_ + "/list-name", "--model",
       dir_ + "/list-name/config.json: key \"name\": value [\"a\"] is not allowed (allowed: a string)"},
      {"no-such-model", "--model",
       "--model: value \"no-such-model\" is not a preset or a file (allowed presets: "},
  };
  for (const auto& c : cases) {
    const auto m = load_model(c.arg, c.flag);
    ASSERT_FALSE(m.ok()) << c.arg;
    EXPECT_EQ(m.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
    EXPECT_EQ(m.status().message().rfind(c.expected, 0), 0u) << m.status().message();
  }
  EXPECT_NE(load_model("no-such-model").status().message().find(
                "; or a model TOML file, a Hugging Face config.json or a folder holding one)"),
            std::string::npos);
  EXPECT_EQ(model_file(dir_ + "/empty").status().message(),
            "--model: " + dir_ + "/empty: a folder without config.json " + allowed);
}

// A plan file's [model] preset = "..." goes through the same loader: a folder works there too.
TEST_F(ModelFolder, APlanFilesModelMayBeAFolder) {
  const std::string folder = write_config("Qwen3-4B-local");
  fs::create_directories(dir_ + "/empty");
  const auto plan_with = [&](const std::string& model) {
    const std::string path = dir_ + "/plan.toml";
    std::ofstream(path) << "seq_len = 4096\n[model]\npreset = \"" << model
                        << "\"\n[gpu]\npreset = \"h100-80gb\"\n[cluster]\nnum_gpus = 4\n[knobs]\nsp = 4\nzero_stage = 1\n";
    return load_plan(path);
  };
  const auto plan = plan_with(folder);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->model.name, "Qwen3-4B-local");
  EXPECT_EQ(plan->model.hidden_size, 2560);
  const auto bad = plan_with(dir_ + "/empty");
  EXPECT_EQ(bad.status().message(), dir_ + "/plan.toml: key \"model.preset\": " + dir_ +
                                        "/empty: a folder without config.json (allowed: a model preset, a model "
                                        "TOML file, a Hugging Face config.json or a folder holding one)");
}

}  // namespace
}  // namespace spplan
