// Internal to planner/config: turning a preset name or a path into a file path, and the
// table-level readers that plan files reuse.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "planner/config/cluster_spec.hpp"
#include "planner/config/model_spec.hpp"
#include "planner/core/status.hpp"

namespace spplan {

// `kind` is "models" or "gpus"; `flag` names the option in messages ("--model"; "" for none);
// `files_allowed` the files a value may name besides a preset ("a GPU TOML file").
// A name with no '/' and no .toml/.json ending is a preset under configs_dir()/kind; else a path.
Result<std::string> resolve_preset(const std::string& kind, const std::string& flag, std::string_view name_or_path,
                                   const std::vector<std::string>& presets, const std::string& files_allowed);
std::vector<std::string> list_presets(const std::string& kind);

// True when resolve_preset reads `text` as a preset's name: no '/' and no .toml/.json ending.
bool is_preset_name(std::string_view text);

Result<ModelSpec> model_from_table(const std::string& source, const toml::table& table);
Result<GpuSpec> gpu_from_table(const std::string& source, const toml::table& table);

}  // namespace spplan
