#include "engine/run/signals.hpp"

#include <signal.h>

#include <csignal>

#include <ATen/ATen.h>

namespace spplan::engine {
namespace {

volatile std::sig_atomic_t g_signal = 0;
extern "C" void note_signal(int sig) { g_signal = sig; }

}  // namespace

void catch_rank_stop_signals() {
  struct sigaction action {};
  action.sa_handler = note_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

int rank_stop_signal() { return g_signal; }

int agreed_stop_signal(Comm& comm) {
  at::Tensor t = at::tensor({static_cast<int64_t>(g_signal)}, at::kLong);
  comm.all_reduce_max(t);
  return static_cast<int>(t.item<int64_t>());
}

}  // namespace spplan::engine
