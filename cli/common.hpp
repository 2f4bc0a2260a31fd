// Shared pieces of the `spplan` subcommands: the flags that name a model, a cluster and a
// sequence, and how a Status becomes an exit code.
#pragma once

#include <string>
#include <vector>

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/plan_spec.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_guard.hpp"
#include "planner/core/status.hpp"

namespace spplan::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNoFit = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 70;  // EX_SOFTWARE: a bug in spplan, not in the input

// Args::parse from argv[1] for a subcommand that takes flags only: a stray word ("128k" after a
// flag that takes none) is an error rather than silently ignored.
Result<Args> parse_flags(int argc, const char* const* argv, const std::vector<FlagSpec>& specs);

// --model --gpu --gpus [--gpus-per-node] [--nodes] [--trainer] (and --seq when `with_seq`).
std::vector<FlagSpec> cluster_flag_specs(bool with_seq);
// --seq S alone (rent), as cluster_flag_specs(true) has it.
FlagSpec seq_flag_spec();

// The allowed values of --gpu and --seq in help texts (`--help` lists the presets); --model's is
// kModelAllowed (planner/config/loaders.hpp), which the engine and the GUI share.
inline constexpr const char* kGpuAllowed = "a GPU preset or a GPU TOML file";
inline constexpr const char* kSeqAllowed = kSeqLenForms;

// Builds a plan from those flags (knobs at their defaults); --nodes sets gpus = nodes x per node.
// --price-per-gpu-hour or --price-per-node-hour (after the GPUs per node are known) into the GPU's
// price_per_gpu_hour; neither leaves the GPU file's.
Status apply_price_flags(const Args& args, GpuSpec* gpu);
// --headroom PCT into plan->memory_headroom.
Status apply_headroom_flag(const Args& args, PlanSpec* plan);
// The validation results shipped with the source (validation/results), read once; nullptr when
// there are none to read.
const MeasuredAccuracy* measured_accuracy();
// The plan's memory verdict against the measured error of its trainer on its GPU.
MemoryVerdict verdict_of(const PlanSpec& plan, const costmodel::Estimate& estimate);
Result<PlanSpec> plan_from_flags(const Args& args, bool with_seq);

// Error when the output file `out` (given with `flag`) is, or lies inside, one of the inputs
// (planner/core/path_guard.hpp: links and hard links resolved): writing it would destroy the input.
// Inputs that are not files (preset names) match nothing.
Status check_not_an_input(const std::string& flag, const std::string& out, const std::vector<NamedPath>& inputs);

// Appends the files the stack's trainer record was read from to a command's inputs: the record
// itself named by `flag` ("--trainer", "--plan's trainer"), each base it names by `flag + " base"`.
// A preset's files count too: configs/trainers/hf.toml is read by `--trainer hf`.
void add_trainer_files(const TrainingStack& stack, const std::string& flag, std::vector<NamedPath>* inputs);
// The GPU file `file` (as gpu_file gives it) and, when it names `base = "PRESET"`, that preset's
// file: the loader reads both, so neither may be an output.
void add_gpu_files(const std::string& file, const std::string& flag, std::vector<NamedPath>* inputs);

// The files behind a plan file, as a command's inputs: the plan (`--plan`), the presets its
// [model] and [gpu] name ("--plan's model", "--plan's gpu"; a hand-written plan may, as
// configs/plans/ do) and its trainer record with each base ("--plan's trainer").
std::vector<NamedPath> plan_input_files(const std::string& plan_path, const PlanSpec& plan);

// Prints "spplan: <message>" on stderr, always one line, and returns the exit code for the status.
int fail(const Status& status);

// Prints "spplan: warning: <message>" on stderr, one line; the command goes on.
void warn(const std::string& message);

// Appends `extra` to `base`.
std::vector<FlagSpec> with(std::vector<FlagSpec> base, const std::vector<FlagSpec>& extra);

}  // namespace spplan::cli
