// Starting ranks the way `torchrun --standalone` does, and reading the variables it sets.
//
// launch_local() forks N copies of this executable with RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT, then waits. When one rank exits
// non-zero or is killed, the launcher says which, stops the others (SIGTERM, then SIGKILL after a
// grace period) and returns non-zero, so a dead rank never leaves the rest hanging in a collective.
// Children also die with the launcher (PR_SET_PDEATHSIG).
//
// Out of device memory (a rank exits 3): the ranks of an SP group usually run out at the same
// allocation, at once. Each says so in its own stderr line; the JSON objects go to a file the
// launcher names (append_oom_report), and the launcher prints the first one alone on stdout, so
// `--json` still prints one object.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/parallel/dist_env.hpp"
#include "planner/core/status.hpp"

namespace spplan::engine {

// A rank's exit code when the device ran out of memory (worker.hpp).
inline constexpr int kExitOutOfMemory = 3;

// The torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), or Slurm's
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) when RANK is unset. nullopt when neither is set;
// an error naming the variable when one is malformed or MASTER_ADDR/MASTER_PORT are missing.
Result<std::optional<DistEnv>> read_dist_env();

// True in a process started by launch_local() (so it runs as a rank even though --nproc is given).
bool is_launched_child();

// A loopback port the kernel says is free now (29500 if it cannot tell). Another process may take
// it before rank 0 binds it; the window is short and the TCPStore then fails loudly (not a hang).
int free_port();

// Starts `nproc` ranks running `argv` (this executable), waits for them; returns the exit code
// for the whole run: 0 when all ranks succeed, else the first failing rank's code (1 for a signal).
int launch_local(int64_t nproc, int argc, char** argv);

// In a rank started by launch_local: appends one line to the launcher's out-of-memory file and
// returns true; false elsewhere (the caller prints it itself).
bool append_oom_report(const std::string& json_line);

}  // namespace spplan::engine
