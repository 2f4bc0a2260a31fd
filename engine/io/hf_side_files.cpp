#include "engine/io/hf_side_files.hpp"

#include <fstream>
#include <iterator>

#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace {

constexpr const char* kBlobPrefix = "hf.";

}  // namespace

const std::vector<std::string>& hf_side_file_names() {
  static const std::vector<std::string> kNames = {"config.json",          "generation_config.json", "tokenizer.json",
                                                  "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
                                                  "vocab.json",           "merges.txt",             "chat_template.jinja"};
  return kNames;
}

Result<HfSideFiles> read_hf_side_files(const std::string& dir) {
  HfSideFiles files;
  for (const std::string& name : hf_side_file_names()) {
    const std::string path = dir + "/" + name;
    if (look_at(path).kind == PathKind::kMissing) continue;
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::invalid("--init-from: " + path + ": cannot read (allowed: a readable file or none)");
    files[name] = std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

HfSideFiles hf_side_files_of(const std::map<std::string, std::string>& blobs) {
  HfSideFiles files;
  for (const std::string& name : hf_side_file_names()) {
    if (auto it = blobs.find(kBlobPrefix + name); it != blobs.end()) files[name] = it->second;
  }
  return files;
}

std::vector<BlobRef> hf_side_file_blobs(const HfSideFiles& files) {
  std::vector<BlobRef> blobs;
  for (const auto& [name, bytes] : files) blobs.push_back({kBlobPrefix + name, bytes.data(), bytes.size()});
  return blobs;
}

Result<std::string> exported_config(const std::string& original, const nlohmann::json& from_spec, bool bf16,
                                    int64_t max_position_embeddings) {
  nlohmann::json config = from_spec;
  if (!original.empty()) {
    config = nlohmann::json::parse(original, nullptr, false);
    if (!config.is_object()) return Status::invalid("--export-hf: the carried config.json is not a JSON object");
  }
  config.erase("torch_dtype");  // transformers 5 renamed it "dtype": one key, the dtype written
  config["dtype"] = bf16 ? "bfloat16" : "float32";
  if (max_position_embeddings > 0) {  // find, not operator[]: that would add the key as null
    const auto known = config.find("max_position_embeddings");
    if (known == config.end() || !known->is_number_integer() || known->get<int64_t>() < max_position_embeddings) {
      config["max_position_embeddings"] = max_position_embeddings;
    }
  }
  return config.dump(2) + "\n";
}

Status write_hf_side_files(const std::string& dir, const HfSideFiles& files) {
  for (const auto& [name, bytes] : files) {
    if (name == "config.json") continue;
    SPPLAN_RETURN_IF_ERROR(write_file_atomically(dir + "/" + name, bytes));
  }
  return Status::ok();
}

}  // namespace spplan::engine
