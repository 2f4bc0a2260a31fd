#include "planner/config/preset_path.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

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
  // look_at, not is_regular_file: a 300-character name is not a preset, and must not throw.
  if (text.empty() || look_at(path).kind != PathKind::kFile) {
    return Status::invalid((flag.empty() ? "" : flag + ": ") + "value \"" + printable(text) +
                           "\" is not a preset or a file (allowed presets: " + join(presets) +
                           "; or a path to a .toml or config.json)");
  }
  return path;
}

Status check_input_file(const std::string& path) { return check_readable_file(path); }

}  // namespace spplan
