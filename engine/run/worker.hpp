// One rank of `spplan-engine run`: checks its inputs, joins the others, trains, reports.
// Rank 0 prints a progress line per step on stderr and, with --json, the JSON object on stdout.
// Exit codes: 0 done, 2 bad input (one line on stderr, rank 0), 3 out of device memory (one line
// naming this rank, what it tried to allocate and what was in use; with --json this rank prints
// {"oom": true, ...}), 1 anything else (a dead peer, a timeout, an I/O error: one line naming
// this rank).
//
// SPPLAN_ENGINE_DEVICE_MEMORY_LIMIT=BYTES: on a CPU run, emulate a device of that size, so a plan
// that does not fit fails as it would on a GPU (memory_meter.hpp set_device_memory_limit); on a
// GPU, cap the caching allocator at that many bytes (at most the device's), as on a smaller GPU
// (bench/engine/longest_gpu.py compares runners under one cap).
//
// Test hook: SPPLAN_ENGINE_FAULT="kill:R:K" makes rank R kill itself (SIGKILL) before step K;
// "stop:R:K" stops it instead (SIGSTOP: a hung rank, which the collective timeout must catch).
// SPPLAN_ENGINE_COMM_TIMEOUT_S: how long a rendezvous or collective waits for a peer (comm.hpp).
#pragma once

#include "engine/run/launcher.hpp"
#include "engine/run/options.hpp"

namespace spplan::engine {

int run_rank(RunOptions options, const DistEnv& env);

// Bad input of `run` as `spplan` prints its own (cli/common.cpp fail()): "spplan: MESSAGE" on one
// line of stderr; returns the exit code 2.
int print_bad_input(const Status& status);

// The checks that read files (--data, --resume): done once by the launcher before it starts
// ranks, and again by each rank. Errors are bad input (exit 2).
Status check_inputs(RunOptions* options, int64_t world);

}  // namespace spplan::engine
