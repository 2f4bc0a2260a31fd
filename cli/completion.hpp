// Bash completion for `spplan`, generated from the command table (command_table.hpp): the
// commands, each command's flags, the values of flags that take one of a few words (--zero,
// --format, ...), the preset names of --model and --gpu, and file names for the other values.
// Built into build/completion/spplan by spplan_completion and installed by `cmake --install`
// into share/bash-completion/completions/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/command_table.hpp"

namespace spplan::cli {

// The words a value is chosen from when `allowed` lists them ("none, cpu, nvme" -> none cpu
// nvme); empty when it describes a form instead ("an integer >= 1", a path).
std::vector<std::string> allowed_words(const std::string& allowed);

// The script. `extra_flags` gives flags of commands spplan hands to spplan-engine (run, calibrate,
// validate), when the engine's tables are at hand; `model_presets` and `gpu_presets` are offered
// after --model / --gpu.
std::string bash_completion(const std::vector<Command>& commands,
                            const std::map<std::string, std::vector<FlagSpec>>& extra_flags,
                            const std::vector<std::string>& model_presets,
                            const std::vector<std::string>& gpu_presets);

}  // namespace spplan::cli
