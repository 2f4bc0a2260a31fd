#include "planner/config/preset_path.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
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

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The preset a name means whatever its case ("H100-80GB", "TRL"): names are lower case.
std::optional<std::string> preset_ignoring_case(std::string_view text, const std::vector<std::string>& presets) {
  for (const std::string& p : presets) {
    if (lower(p) == lower(text)) return p;
  }
  return std::nullopt;
}

// "; did you mean \"h100-80gb\"? (the H100 presets: h100-80gb, h100-nvl-94gb)": a family name
// ("H100", "a100") that several presets start with; "" when fewer than two do.
std::string family_hint(std::string_view text, const std::vector<std::string>& presets) {
  std::vector<std::string> family;
  for (const std::string& p : presets) {
    if (!text.empty() && lower(p).rfind(lower(text) + "-", 0) == 0) family.push_back(p);
  }
  if (family.size() < 2) return "";
  return "; did you mean \"" + family.front() + "\"? (the " + printable(std::string(text)) + " presets: " + join(family) + ")";
}

// "Qwen/Qwen3-8B": an organisation and a name, as the Hugging Face Hub names a model.
bool looks_like_hub_id(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == 0 || slash == std::string::npos || slash + 1 == text.size() || text.find('/', slash + 1) != std::string::npos) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
  }) && text[0] != '.';
}

// "; or the preset qwen3-8b": the preset a Hub id's name is closest to, when one is close.
std::string close_preset_words(const std::string& name, const std::vector<std::string>& presets) {
  const std::optional<std::string> close = closest_name(name, presets);
  return close ? "; or the preset " + *close : "";
}

// A Hub id no file answers to: its preset when one has its name (spplan downloads nothing), else
// what to pass instead.
Result<std::string> hub_id_preset(const std::string& flag, const std::string& text, const std::vector<std::string>& presets) {
  std::string name = text.substr(text.find('/') + 1);
  // An instruction-tuned release shares its base model's config.json (the architecture keys).
  for (const char* tuned : {"-instruct", "-chat"}) {
    const std::string suffix(tuned);
    if (lower(name).size() > suffix.size() && lower(name).substr(name.size() - suffix.size()) == suffix) {
      name.resize(name.size() - suffix.size());
    }
  }
  if (auto preset = preset_ignoring_case(name, presets)) return configs_dir() + "/models/" + *preset + ".toml";
  return Status::invalid((flag.empty() ? "" : flag + ": ") + "value \"" + printable(text) +
                         "\" is a Hugging Face Hub id, not a preset or a file here, and nothing is downloaded (allowed: "
                         "its config.json or the model folder holding it, e.g. after huggingface-cli download " +
                         printable(text) + " config.json --local-dir DIR" + close_preset_words(name, presets) + ")");
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
    if (kind == "models" && looks_like_hub_id(text) && look_at(text).kind == PathKind::kMissing) {
      return hub_id_preset(flag, text, presets);
    }
    SPPLAN_RETURN_IF_ERROR(check_input_file(text));
    return text;
  }
  const std::string path = configs_dir() + "/" + kind + "/" + text + ".toml";
  // look_at, not is_regular_file: a 300-character name is not a preset, and must not throw.
  if (text.empty() || look_at(path).kind != PathKind::kFile) {
    // GPUs and trainers whatever their case; a model's bare name stays exact, as a folder of that
    // name beside it must be given as a path (model_loader.cpp resolve_model), not met by a preset.
    if (auto preset = preset_ignoring_case(text, presets); preset && kind != "models") {
      return configs_dir() + "/" + kind + "/" + *preset + ".toml";
    }
    const auto exact = preset_ignoring_case(text, presets);
    const std::string family = exact ? "; did you mean \"" + *exact + "\"?" : family_hint(text, presets);
    return Status::invalid((flag.empty() ? "" : flag + ": ") + "value \"" + printable(text) + "\" is not a preset or a file" +
                           (family.empty() ? did_you_mean(text, presets) : family) + " (allowed presets: " +
                           join(presets) + "; or " +
                           files_allowed + ")");
  }
  return path;
}

Status check_input_file(const std::string& path) { return check_readable_file(path); }

}  // namespace spplan
