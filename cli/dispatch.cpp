// The `spplan` front end: argv to a subcommand (DESIGN.md command contract). Kept out of main()
// so that the command-line fuzz target (fuzz/) drives exactly what the program does.
#include <cstring>
#include <iostream>
#include <string>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "planner/core/version.hpp"

#ifdef SPPLAN_HAVE_SIMULATOR
int cmd_simulate(int argc, const char* const* argv);  // cli/cmd_simulate.cpp (global namespace)
#endif

namespace spplan::cli {
namespace {

// `--help` anywhere, or `-h` right after the command: not a value, since no value starts with "--"
// and -h as the first word cannot be one.
bool asks_for_help(int argc, const char* const* argv) {
  if (argc > 2 && std::strcmp(argv[2], "-h") == 0) return true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) return true;
  }
  return false;
}

// `spplan COMMAND --help` and `spplan help COMMAND`; the engine's commands answer for themselves.
int print_command_help(const std::string& name, const char* program) {
  const Command* command = find_command(name);
  if (command == nullptr) {
    return fail(unknown_command(name));
  }
  if (command->engine) {
    const char* engine_argv[] = {program, command->name.c_str(), "--help"};
    return cmd_forward_to_engine(3, engine_argv);
  }
  std::cout << command_help(*command);
  return kExitOk;
}

// `calibrate --from-run` keeps a checked run (cmd_check.cpp); calibrate without it measures this machine.
bool takes_from_run(int argc, const char* const* argv) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--from-run") == 0) return true;
  }
  return false;
}

}  // namespace

int run_command(int argc, const char* const* argv) {
  if (argc < 2) {
    return fail(Status::invalid("command: missing (allowed: " + command_names() + "; see spplan --help)"));
  }
  const std::string command = argv[1];
  if (command == "--version") {
    std::cout << version_line("spplan") << "\n";
    return kExitOk;
  }
  if (command == "--help" || command == "-h" || (command == "help" && argc == 2)) {
    std::cout << program_help();
    return kExitOk;
  }
  if (command == "help") return print_command_help(argv[2], argv[0]);
  // `validate engine --help` is the engine's, like the rest of `validate engine`.
  const bool engine_validate = command == "validate" && argc > 2 && std::string(argv[2]) == "engine";
  if (command == "calibrate" && takes_from_run(argc, argv) && asks_for_help(argc, argv)) return print_calibrate_from_run_help();
  if (!engine_validate && asks_for_help(argc, argv)) return print_command_help(command, argv[0]);
  const int sub_argc = argc - 1;
  const char* const* sub_argv = argv + 1;
  if (command == "estimate") return cmd_estimate(sub_argc, sub_argv);
  if (command == "plan") return cmd_plan(sub_argc, sub_argv);
  if (command == "fit") return cmd_fit(sub_argc, sub_argv);
  if (command == "rent") return cmd_rent(sub_argc, sub_argv);
  if (command == "max-seq") return cmd_max_seq(sub_argc, sub_argv);
  if (command == "sweep") return cmd_sweep(sub_argc, sub_argv);
  if (command == "export") return cmd_export(sub_argc, sub_argv);
  if (command == "validate") return cmd_validate(sub_argc, sub_argv);
#ifdef SPPLAN_HAVE_SIMULATOR
  if (command == "simulate") return ::cmd_simulate(sub_argc, sub_argv);
#else
  // An engine-only build (SPPLAN_ENGINE_ONLY, a GPU node) leaves out the simulator, which needs Boost.
  if (command == "simulate") return fail(Status::invalid("simulate: the simulator is not built into this spplan"));
#endif
  if (command == "check") return cmd_check(sub_argc, sub_argv);
  if (command == "lengths") return cmd_lengths(sub_argc, sub_argv);
  if (command == "calibrate" && takes_from_run(argc, argv)) return cmd_calibrate_from_run(sub_argc, sub_argv);
  if (command == "run" || command == "calibrate") return cmd_forward_to_engine(argc, argv);
  return fail(unknown_command(command));
}

}  // namespace spplan::cli
