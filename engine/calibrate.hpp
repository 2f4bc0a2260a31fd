// `spplan-engine calibrate [--out FILE.toml]`: measures this machine (fp32 GEMM, the engine's
// attention, copy bandwidth, AdamW, tiny-op overhead, Gloo all-to-all and all-reduce between 2
// local ranks) and writes a GPU-spec TOML that spplan::load_gpu accepts (name = "cpu-host").
// Without --out it prints the TOML. About 10 s on any CPU: each measurement grows its work until
// one call is long enough to time, then stops (probe_budget.hpp), so a CPU that emulates bf16 is
// measured at a smaller GEMM, not for minutes.
#pragma once

#include "engine/launcher.hpp"

namespace spplan::engine {

// The whole command: argv[1] == "calibrate". Exit 0, or 2 on bad flags / an unwritable --out.
int calibrate_main(int argc, char** argv);

// In a rank started by calibrate_main's launch_local (2 ranks): the Gloo measurements. Rank 0
// writes "a2a_GBps latency_s" to the file named by SPPLAN_CALIBRATE_COMM_OUT.
int calibrate_comm_rank(const DistEnv& env);

}  // namespace spplan::engine
