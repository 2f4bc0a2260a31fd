#include "planner/config/preset_path.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"

#ifndef SPPLAN_SOURCE_CONFIGS_DIR
#define SPPLAN_SOURCE_CONFIGS_DIR "configs"
#endif

namespace spplan {

std::string configs_dir() {
  if (const char* env = std::getenv("SPPLAN_CONFIG_DIR"); env != nullptr && *env != '\0') return env;
  return SPPLAN_SOURCE_CONFIGS_DIR;
}

std::vector<std::string> list_presets(const std::string& kind) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(configs_dir() + "/" + kind, error)) {
    if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> resolve_preset(const std::string& kind, const std::string& flag, std::string_view name_or_path,
                                   const std::vector<std::string>& presets) {
  const std::string text(name_or_path);
  // Preset names may hold dots ("llama-3.1-8b"); a path has a '/' or a .toml / .json ending.
  const auto ends_with = [&text](const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool is_name = text.find('/') == std::string::npos && !ends_with(".toml") && !ends_with(".json");
  if (!is_name) {
    SPPLAN_RETURN_IF_ERROR(check_input_file(text));
    return text;
  }
  const std::string path = configs_dir() + "/" + kind + "/" + text + ".toml";
  if (text.empty() || !std::filesystem::is_regular_file(path)) {
    return Status::invalid((flag.empty() ? "" : flag + ": ") + "value \"" + text +
                           "\" is not a preset or a file (allowed presets: " + join(presets) +
                           "; or a path to a .toml or config.json)");
  }
  return path;
}

Status check_input_file(const std::string& path) {
  std::error_code error;
  const auto type = std::filesystem::status(path, error).type();
  if (type == std::filesystem::file_type::not_found || type == std::filesystem::file_type::none) {
    return Status::invalid(path + ": cannot open (no such file)");
  }
  if (type == std::filesystem::file_type::directory) {
    return Status::invalid(path + ": cannot open (a directory; allowed: a file)");
  }
  if (type != std::filesystem::file_type::regular) {
    return Status::invalid(path + ": cannot open (not a regular file; allowed: a file)");
  }
  if (!std::ifstream(path)) return Status::invalid(path + ": cannot open (" + std::strerror(errno) + ")");
  return Status::ok();
}

}  // namespace spplan
