// What one optimizer step measures (the phases and their clock), and the run's means over its
// steps: the training loop (train.hpp) fills StepStats, the worker reports them (report.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include <c10/core/Device.h>

#include "engine/parallel/comm.hpp"
#include "engine/run/report.hpp"

namespace spplan::engine {

// One optimizer step, this rank, seconds. The first six are consecutive and disjoint: they add up
// to the step. Each ends with the device drained (PhaseClock below): CUDA runs kernels
// asynchronously, and an unsynchronised timer charges a phase to whichever later one waits on it.
struct PhaseTimes {
  double data_s = 0;       // token windows to the device, and the count of valid tokens
  double forward_s = 0;    // embedding and layers, with their all-to-alls (and ZeRO-3 gathers)
  double loss_s = 0;       // final norm, head and cross-entropy forward (tiled: its gradients too)
  double backward_s = 0;   // all of backward: loss, layers (recompute under act_ckpt), all-to-alls,
                           // and at ZeRO 2, 3 the gradient reduce-scatters
  double grad_all_reduce_s = 0;  // after backward: the gradient all-reduce (ZeRO 0, 1) and the loss's
  double optimizer_s = 0;        // gradient norm (and clipping), AdamW, plus the parameter all-gather at ZeRO 1, 2
  // Parts of the phases above, not added to the step again:
  double all_to_all_s = 0;       // the Ulysses all-to-alls (in forward_s and backward_s)
  double grad_reduce_scatter_s = 0;  // ZeRO 2, 3 gradient reduce-scatters (in backward_s)
  double ring_s = 0;             // ring attention hops the blocks did not hide (in forward_s, backward_s)

  double total_s() const { return data_s + forward_s + loss_s + backward_s + grad_all_reduce_s + optimizer_s; }
};

struct StepStats {
  double loss = 0;          // global batch: sum of token losses / valid tokens
  int64_t tokens = 0;       // valid tokens in the global batch
  double step_time_s = 0;   // phases.total_s()
  double lr = 0;            // the learning rate this step used (lr_schedule.hpp)
  double grad_norm = 0;     // global L2 norm of the gradients, before clipping (global_grad_norm)
  PhaseTimes phases;
};

// Consecutive phases of a step: lap() drains the device, then returns the seconds since the last
// lap. Draining costs the overlap between phases a step would otherwise have (a launch queue's
// worth, microseconds against phases of milliseconds), and makes each phase its own work.
class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;

  explicit PhaseClock(c10::Device device) : device_(device) { synchronize(device_); last_ = Clock::now(); }
  double lap() {
    synchronize(device_);
    const Clock::time_point now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  c10::Device device_;
  Clock::time_point last_;
};

// Mean over the steps after the warm-up step (the first step of a run warms caches and the
// allocator); a one-step run reports that step: tokens_per_s, step_time_s and phases_s of `r`.
void summarize(const std::vector<StepStats>& steps, RunReport* r);

}  // namespace spplan::engine
