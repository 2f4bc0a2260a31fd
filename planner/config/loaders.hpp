// Loading models, GPUs and plans from presets, TOML files and Hugging Face config.json files.
//
// A name without '/' and without a .toml/.json ending is a preset: configs/models/NAME.toml or
// configs/gpus/NAME.toml under configs_dir(). Anything else is a path. TOML files are strict:
// unknown keys are errors. A config.json is read as Hugging Face writes it: the architecture keys
// are required, the rest (architectures, torch_dtype, ...) are ignored; its model's name follows
// model_name.hpp. A model may also be a Hugging Face model folder (a download, a cache snapshot,
// a save_pretrained output) given as a path ("./Qwen3-8B", "Qwen3-8B/"): its config.json, read as
// that file is.
// Every failure is one line naming the file, the key, the value and what is allowed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/output_file.hpp"  // write_file_atomically: every writer of a plan file
#include "planner/core/status.hpp"

namespace spplan {

// What names a model besides a preset, and all it may be: the --model help of the CLI, the engine
// and the GUI, and the messages that refuse a model argument.
inline constexpr const char* kModelFilesAllowed = "a model TOML file, a Hugging Face config.json or a folder holding one";
inline const std::string kModelAllowed = std::string("a model preset, ") + kModelFilesAllowed;

// The folder holding models/, gpus/, trainers/ and plans/: $SPPLAN_CONFIG_DIR if set; else the one a program
// set (set_configs_dir: the Python package's own copy); else, for a binary installed by
// `cmake --install`, <prefix>/share/spplan/configs beside its bin/; else the source tree's
// configs/ (compiled in).
std::string configs_dir();
void set_configs_dir(const std::string& dir);

// `flag` names the source of an unknown preset name in its message ("--model: value ..."); callers
// that add their own context (a plan file's key, a CSV column) pass "".
Result<ModelSpec> load_model(std::string_view name_or_path, const std::string& flag = "--model");
Result<GpuSpec> load_gpu(std::string_view name_or_path, const std::string& flag = "--gpu");

// The file a --model / --gpu value names: the preset's file under configs_dir(), or the path (a
// model folder's config.json).
Result<std::string> model_file(std::string_view name_or_path);
Result<std::string> gpu_file(std::string_view name_or_path);

// A trainer record (trainer_spec.hpp): a preset name (configs/trainers/NAME.toml) or a TOML file,
// loaded once per file. A record's `base = "PATH"` is read beside the record (a preset's name
// stays a preset). The stack's `trainer` is the preset's name, or the path as given for a user's
// file; the files it was read from, base by base, are its record's `files` (what a command that
// writes must leave alone), and a plan file names a user's record by the first, absolute.
Result<TrainingStack> load_trainer(std::string_view name_or_path, const std::string& flag = "--trainer");

// Preset names found under configs_dir(), sorted.
std::vector<std::string> model_presets();
std::vector<std::string> gpu_presets();
std::vector<std::string> trainer_presets();

// A plan file: seq_len, [model], [gpu], [cluster], [knobs]. [model] and [gpu] are either
// `preset = "name"` or the full set of keys. Checked with check_plan().
Result<PlanSpec> load_plan(const std::string& path);
// The key of a plan file a check_plan key names: `key "knobs.sp"`, `key "seq_len"`,
// `key "cluster.num_gpus"`, `key "model"` (its [model] table). load_plan's and the exports' messages.
std::string plan_file_key(const std::string& key);

// Self-contained TOML (model and GPU written in full) that load_plan() reads back unchanged.
std::string plan_to_toml(const PlanSpec& plan);

// Ok when `path` is a regular file that can be opened; else "path: cannot open (no such file)",
// "(a directory; ...)", "(not a regular file; ...)": devices and pipes would block or never end;
// or the system's reason ("(File name too long)", "(Too many levels of symbolic links)").
// Never throws: planner/core/path_info.hpp.
Status check_input_file(const std::string& path);

}  // namespace spplan
