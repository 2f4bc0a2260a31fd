// A run's paths before its first step (each once happened: --log onto the --data file emptied the corpus,
// --export-hf onto the --init-from folder overwrote the base model, a --save that was a file
// failed only after the last step).
//
// Inputs: --data, --eval-data (files), --init-from (a folder), --resume / --resume-or-init (a
// checkpoint folder), --plan and the --model / --gpu files. Outputs: --log (a file), --save (a
// checkpoint folder), --export-hf (a folder replaced whole). check_run_paths refuses an output
// that is, lies inside or holds an input, or overlaps another output (path_guard.hpp), then checks
// that each output can be written: --save a folder a file can be made in, --export-hf a new folder
// or one holding only a model's files (staged_folder.hpp), --log a writable file or a new name in a
// writable folder. Nothing is written but the probes and the output folders themselves.
#pragma once

#include <vector>

#include "engine/run/options.hpp"
#include "planner/core/path_guard.hpp"

namespace spplan::engine {

// What the run reads and what it writes, each with the flag that named it.
std::vector<NamedPath> run_inputs(const RunOptions& o);
std::vector<NamedPath> run_outputs(const RunOptions& o);

// Both checks above; one line naming the flag on failure.
Status check_run_paths(const RunOptions& o);

}  // namespace spplan::engine
