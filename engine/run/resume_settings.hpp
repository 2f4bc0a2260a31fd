// What a checkpoint carries of the run besides its tensors, and how a resume continues it
// (once, a --resume without --lr-schedule and --train-steps trained at a constant rate).
//
// Saved (checkpoint_io.hpp TrainingSettings): the optimizer (lr, warm-up, schedule and its horizon,
// min_lr, weight decay and its grouping, clipping, AdamW's betas and eps), the sequence length and
// the data position. On --resume:
//   - a setting the command does not give is taken from the checkpoint;
//   - a setting it gives (a flag, or a key of the plan's [optimizer]) must equal the saved one, else
//     one line names it and both values: a new schedule is a new run (--init-from an export);
//   - without --steps the run goes to the schedule's end (train_steps, else the first run's --steps);
//   - --seq may change (progressive context extension): files read in order continue at the saved
//     token position, with windows of the new length; synthetic data continues at the next sequence
//     index; a shuffled pass is an order of windows of one length, so --shuffle refuses a new --seq.
// A checkpoint from before these were stored resumes as it did: with the command's settings.
#pragma once

#include <string>

#include "engine/io/checkpoint_io.hpp"
#include "engine/run/options.hpp"

namespace spplan::engine {

// The settings `o` trains with (next_token 0: the trainer sets the position).
TrainingSettings settings_of(const RunOptions& o);

// Applies the checkpoint's settings to `o` as above. `convert_only`: --resume with --export-hf and no
// --steps (no step trained: nothing to compare). Returns what a person should know about the resume
// ("" when nothing): the --seq change and where the data continues, steps past the schedule's end.
Result<std::string> continue_settings(RunOptions* o, const LoadedCheckpoint& checkpoint, bool convert_only);

}  // namespace spplan::engine
