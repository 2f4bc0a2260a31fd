// Writing a whole folder (an --export-hf model) so that a failure at any point, a kill included,
// never leaves half of it: the files go into a temporary sibling, PARENT/.NAME.spplan-tmp-PID, and
// only a complete, fsync'ed folder takes the final name. Where the folder exists already, the two
// are exchanged in one step (renameat2 RENAME_EXCHANGE) and the old one is then removed; a file
// system without the exchange gets two renames (the old folder is moved aside first, so a kill
// between them leaves it whole under PARENT/.NAME.spplan-old-PID, never half-written).
//
// What may be replaced: a folder holding only what an export writes (model_folder_entry below).
// check_replaceable_model_folder() says so before a run trains, so a folder of the user's other
// files is refused before the first step, not emptied after the last.
#pragma once

#include <string>

#include "planner/core/status.hpp"

namespace spplan::engine {

class StagedFolder {
 public:
  // Creates the staged sibling of `dir` (and `dir`'s parent folders when missing). `flag` names
  // the flag in messages ("--export-hf").
  static Result<StagedFolder> begin(const std::string& dir, const std::string& flag);
  StagedFolder(StagedFolder&& other) noexcept;
  StagedFolder& operator=(StagedFolder&&) = delete;
  StagedFolder(const StagedFolder&) = delete;
  ~StagedFolder();  // not committed: the staged folder is removed

  const std::string& path() const { return staged_; }  // write the files here
  // Puts the staged folder in place of `dir` (its files and itself fsync'ed first).
  Status commit();

 private:
  StagedFolder(std::string dir, std::string staged, std::string flag);
  std::string dir_, staged_, flag_;
  bool committed_ = false;
};

// A name an export writes or carries into a model folder: config.json, the safetensors and their
// index, generation_config.json, the tokenizer's files.
bool model_folder_entry(const std::string& name);

// Ok when `dir` is missing (its parent then creatable and writable) or a folder of model_folder_entry
// names only, in a writable parent; else one line naming `flag`, the path and the first other entry.
Status check_replaceable_model_folder(const std::string& dir, const std::string& flag);

// Ok when a file can be created in `dir` (made first when missing); else one line naming `flag`.
// A folder that exists as a file is "a file (allowed: a folder)".
Status check_writable_folder(const std::string& dir, const std::string& flag);

}  // namespace spplan::engine
