#include "planner/config/preset_path.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"
#include "planner/core/suggest.hpp"

#ifndef SPPLAN_SOURCE_CONFIGS_DIR
#define SPPLAN_SOURCE_CONFIGS_DIR "configs"
#endif
#ifndef SPPLAN_CONFIGS_FROM_BINDIR
#define SPPLAN_CONFIGS_FROM_BINDIR "../share/spplan/configs"
#endif

namespace spplan {
namespace {

std::string& program_configs_dir() {
  static std::string dir;
  return dir;
}

// <prefix>/share/spplan/configs beside an installed <prefix>/bin/spplan; "" when this program is
// not installed so (a build tree's binary, or a Python interpreter).
std::string installed_configs_dir() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  const std::filesystem::path dir = self.parent_path() / SPPLAN_CONFIGS_FROM_BINDIR;
  return look_at((dir / "models").string()).kind == PathKind::kDirectory ? dir.lexically_normal().string() : "";
}

}  // namespace

void set_configs_dir(const std::string& dir) { program_configs_dir() = dir; }

std::string configs_dir() {
  if (const char* env = std::getenv("SPPLAN_CONFIG_DIR"); env != nullptr && *env != '\0') return env;
  if (!program_configs_dir().empty()) return program_configs_dir();
  static const std::string installed = installed_configs_dir();  // the binary does not move while it runs
  return installed.empty() ? SPPLAN_SOURCE_CONFIGS_DIR : installed;
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

bool is_preset_name(std::string_view text) {
  // Preset names may hold dots ("llama-3.1-8b"); a path has a '/' or a .toml / .json ending.
  const auto ends_with = [text](std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
  };
  return text.find('/') == std::string_view::npos && !ends_with(".toml") && !ends_with(".json");
}

Result<std::string> resolve_preset(const std::string& kind, const std::string& flag, std::string_view name_or_path,
                                   const std::vector<std::string>& presets, const std::string& files_allowed) {
  const std::string text(name_or_path);
  if (!is_preset_name(text)) {
    SPPLAN_RETURN_IF_ERROR(check_input_file(text));
    return text;
  }
  const std::string path = configs_dir() + "/" + kind + "/" + text + ".toml";
  // look_at, not is_regular_file: a 300-character name is not a preset, and must not throw.
  if (text.empty() || look_at(path).kind != PathKind::kFile) {
    return Status::invalid((flag.empty() ? "" : flag + ": ") + "value \"" + printable(text) +
                           "\" is not a preset or a file" + did_you_mean(text, presets) + " (allowed presets: " +
                           join(presets) + "; or " +
                           files_allowed + ")");
  }
  return path;
}

Status check_input_file(const std::string& path) { return check_readable_file(path); }

}  // namespace spplan
