// The subcommands of `spplan`; each takes argv starting at its own name and returns the exit code.
#pragma once

namespace spplan::cli {

// The whole command line (argv[0] is the program): picks the subcommand, returns the exit code.
int run_command(int argc, const char* const* argv);

int cmd_estimate(int argc, const char* const* argv);
int cmd_plan(int argc, const char* const* argv);
int cmd_fit(int argc, const char* const* argv);
int cmd_rent(int argc, const char* const* argv);
int cmd_max_seq(int argc, const char* const* argv);
int cmd_sweep(int argc, const char* const* argv);
int cmd_export(int argc, const char* const* argv);
int cmd_validate(int argc, const char* const* argv);
int cmd_forward_to_engine(int argc, const char* const* argv);  // run, calibrate
int cmd_check(int argc, const char* const* argv);
int cmd_lengths(int argc, const char* const* argv);
int cmd_calibrate_from_run(int argc, const char* const* argv);  // calibrate --from-run (cmd_check.cpp)
int print_calibrate_from_run_help();  // `calibrate --from-run --help`: its flags (the engine's calibrate has its own)

}  // namespace spplan::cli
