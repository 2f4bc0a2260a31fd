// Stopping a run cleanly on SIGTERM or SIGINT (a job scheduler's time limit, the GUI's stop
// button, Ctrl+C): each rank notes the signal in a handler, finishes the step it is in, and the
// ranks agree (a max over the world) to stop after that same step; then the run saves a checkpoint
// when --save is set, writes its summary (--json, --log) and exits 128 + the signal (143, 130),
// the shell's convention for a command ended by a signal.
#pragma once

#include "engine/parallel/comm.hpp"

namespace spplan::engine {

// Installs the handlers (SA_RESTART: a collective's system calls resume after the handler).
void catch_rank_stop_signals();

// The signal this process received, 0 when none.
int rank_stop_signal();

// The signal any rank received (the largest number), 0 when none. Collective: every rank calls it
// after every step.
int agreed_stop_signal(Comm& comm);

}  // namespace spplan::engine
