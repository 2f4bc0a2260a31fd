// The commands of `spplan`, each with its usage, what it does, its exit codes and its flags: the
// one table that `spplan --help`, `spplan COMMAND --help`, the bash completion, the Python
// package and the help test (tests/cli/test_help.cpp) read. The flags are the very FlagSpec
// lists the commands parse with.
#pragma once

#include <string>
#include <vector>

#include "planner/core/args.hpp"
#include "planner/core/status.hpp"

namespace spplan::cli {

struct Command {
  std::string name;       // "max-seq"
  std::string usage;      // the flags after the name: "--model M --gpu G ..."
  std::string summary;    // one sentence: what it answers
  std::string exit_codes; // "0 fits, 1 does not fit, 2 bad input"
  // The flags it parses; empty for `run` and `calibrate`, whose flags spplan-engine owns.
  std::vector<FlagSpec> flags;
  bool engine = false;    // handed to spplan-engine (its own --help)
};

// Every command, in the order `spplan --help` lists them.
const std::vector<Command>& commands();
// The command of that name, or nullptr.
const Command* find_command(const std::string& name);
// "estimate, plan, ...": for "command ... is not known (allowed: ...)".
std::string command_names();
// `command "NAME" is not known; did you mean "plan"? (allowed: ...)`.
Status unknown_command(const std::string& name);

// `spplan --help`.
std::string program_help();
// `spplan COMMAND --help`: usage, summary, every flag with its meaning, allowed values and
// default, the presets when it takes --model or --gpu, the exit codes.
std::string command_help(const Command& command);

// --json: shared by the commands that print one JSON object.
FlagSpec json_flag_spec();
// --conservative: max-seq and fit answer at the measured band's edge (MemoryBand).
FlagSpec conservative_flag_spec();

// The flag lists of the commands (each defined beside its command, in cmd_*.cpp).
std::vector<FlagSpec> estimate_flag_specs();
std::vector<FlagSpec> plan_flag_specs();
std::vector<FlagSpec> fit_flag_specs();
std::vector<FlagSpec> rent_flag_specs();
std::vector<FlagSpec> max_seq_flag_specs();
std::vector<FlagSpec> sweep_flag_specs();
std::vector<FlagSpec> export_flag_specs();
std::vector<FlagSpec> validate_flag_specs();
std::vector<FlagSpec> check_flag_specs();              // cmd_check.cpp
std::vector<FlagSpec> lengths_flag_specs();            // cmd_lengths.cpp
std::vector<FlagSpec> calibrate_from_run_flag_specs();  // cmd_check.cpp
std::vector<FlagSpec> simulate_flag_specs();  // cmd_simulate.cpp; not in an engine-only build

}  // namespace spplan::cli
