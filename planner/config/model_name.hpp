// The name a Hugging Face config.json's model goes by in reports, plan files and exports.
//
// A config.json says little about which model it is, and its folder's name is often no help: the
// Hugging Face cache keeps it in .../models--Qwen--Qwen3-8B/snapshots/<commit hash>/, and people
// keep theirs in folders named "model" or in the Trainer's checkpoint-500/. The name is the first
// of these that gives one:
//
//   1. the "name" key, as written. transformers writes no such key, so it is there because a person
//      (or spplan's Python package, for a dict) chose that name.
//   2. the "_name_or_path" key (transformers writes what from_pretrained was given):
//      - a Hub id, kept whole: "Qwen/Qwen3-8B", "gpt2" (one or two parts of letters, digits and
//        "-_.", not starting with "." or "-", neither a name 4 skips);
//      - else a local path, named as in 4 from its last part up: "/data/Qwen3-8B" -> "Qwen3-8B",
//        "out/checkpoint-500" -> "out"; a path of skipped names only goes on to 3.
//   3. a file not named config.json: its stem, which a person chose (a config downloaded or written
//      beside others: ~/configs/phi-3-mini.json -> "phi-3-mini"), unless it is a name 4 skips.
//   4. the folders holding the config.json, nearest first, skipping names that say nothing about the
//      model: a 40-hex-digit commit hash, "snapshots", "model", "models", "checkpoint-<digits>",
//      ".", ".." (compared ignoring case). A cache folder "models--ORG--NAME" is "ORG/NAME".
//        ~/models/Qwen3-8B/config.json                              -> "Qwen3-8B"
//        hub/models--Qwen--Qwen3-8B/snapshots/<hash>/config.json    -> "Qwen/Qwen3-8B"
//        my-llama/model/config.json, out/my-llama/checkpoint-500/   -> "my-llama"
//   5. the file's stem ("config"), when every folder up to the root is skipped.
// An empty or null key counts as absent. A model TOML file keeps its own rule: its "name" key, else
// the file's stem (model_loader.cpp).
#pragma once

#include <string>

namespace spplan {

// The rule above. `name` and `name_or_path` are the keys' values ("" when absent); `config_path`
// is the file as given (a relative path is made absolute from the working directory, without
// resolving links: the cache's config.json is a link into blobs/, whose names mean nothing).
std::string config_model_name(const std::string& config_path, const std::string& name,
                              const std::string& name_or_path);

// True for a folder name rule 4 skips ("model", "snapshots", a commit hash, "checkpoint-500").
bool says_nothing_about_the_model(const std::string& folder);

}  // namespace spplan
