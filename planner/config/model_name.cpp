#include "planner/config/model_name.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <vector>

namespace spplan {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool all_hex(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// "models--Qwen--Qwen3-8B" -> "Qwen/Qwen3-8B" (huggingface_hub joins the repo id's parts with "--");
// "" for any other name.
std::string cache_repo_id(const std::string& folder) {
  const std::string prefix = "models--";
  if (folder.size() <= prefix.size() || folder.compare(0, prefix.size(), prefix) != 0) return "";
  std::string id;
  for (size_t at = prefix.size(); at < folder.size(); ++at) {
    const bool separator = folder.compare(at, 2, "--") == 0;
    id += separator ? '/' : folder[at];
    if (separator) ++at;
  }
  return id;
}

// Rule 4 over `parts`, a path's folder names from the root down: the nearest that says something.
std::string nearest_meaningful(const std::vector<std::string>& parts) {
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (says_nothing_about_the_model(*it)) continue;
    const std::string id = cache_repo_id(*it);
    return id.empty() ? *it : id;
  }
  return "";
}

// A path's parts, split at '/' and at '\' (a config.json written on Windows names C:\...\Qwen3-8B).
std::vector<std::string> path_parts(const std::string& path) {
  std::vector<std::string> parts(1);
  for (const char c : path) {
    if (c == '/' || c == '\\') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

// "Qwen/Qwen3-8B", "gpt2": what the Hub accepts as a model id (huggingface_hub's
// validate_repo_id: letters, digits, "-_.", an optional namespace, no leading "." or "-").
// "model" or "out/checkpoint-500" is a local folder's path, read as one.
bool is_hub_id(const std::string& text) {
  const std::vector<std::string> parts = path_parts(text);
  if (parts.size() > 2 || text.find('\\') != std::string::npos) return false;
  for (const std::string& part : parts) {
    if (part.empty() || part[0] == '.' || part[0] == '-' || says_nothing_about_the_model(part)) return false;
    for (const unsigned char c : part) {
      if (std::isalnum(c) == 0 && c != '-' && c != '_' && c != '.') return false;
    }
  }
  return true;
}

}  // namespace

bool says_nothing_about_the_model(const std::string& folder) {
  const std::string name = lower(folder);
  if (name.empty() || name == "." || name == ".." || name == "model" || name == "models" || name == "snapshots") {
    return true;
  }
  if (name.size() == 40 && all_hex(name)) return true;  // a snapshot's commit hash
  const std::string checkpoint = "checkpoint-";  // the HF Trainer's output_dir/checkpoint-500
  return name.size() > checkpoint.size() && name.compare(0, checkpoint.size(), checkpoint) == 0 &&
         all_digits(name.substr(checkpoint.size()));
}

std::string config_model_name(const std::string& config_path, const std::string& name,
                              const std::string& name_or_path) {
  if (!name.empty()) return name;
  if (!name_or_path.empty()) {
    if (is_hub_id(name_or_path)) return name_or_path;
    const std::string from_path = nearest_meaningful(path_parts(name_or_path));
    if (!from_path.empty()) return from_path;
  }
  std::error_code error;
  std::filesystem::path file = std::filesystem::absolute(config_path, error);
  if (error) file = config_path;
  file = file.lexically_normal();
  const std::string stem = file.stem().string();
  if (lower(file.filename().string()) != "config.json" && !says_nothing_about_the_model(stem)) return stem;
  std::vector<std::string> folders;
  for (const auto& part : file.parent_path().relative_path()) folders.push_back(part.string());  // no "/"
  const std::string from_folder = nearest_meaningful(folders);
  return from_folder.empty() ? stem : from_folder;
}

}  // namespace spplan
