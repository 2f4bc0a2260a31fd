// The learning rate of each optimizer step: a linear warm-up from 0, then constant, cosine or
// linear decay to min_lr at the run's last step. Pure arithmetic (no LibTorch): the trainer asks
// it once per step and passes the answer to the fused AdamW kernel.
//
// With k the optimizer steps already done (0 for the first step), W = warmup_steps, T = the
// run's total steps (--steps), L = lr, m = min_lr:
//   k < W:      L * k / W                                  (the first step of a warm-up has lr 0)
//   otherwise:  p = min(1, (k - W) / max(1, T - W))
//               constant  L
//               cosine    m + (L - m) * (1 + cos(pi p)) / 2
//               linear    m + (L - m) * (1 - p)
// These are the shapes of Hugging Face transformers' get_constant_schedule_with_warmup,
// get_cosine_schedule_with_warmup (num_cycles 0.5; with min_lr, as its
// get_cosine_with_min_lr_schedule_with_warmup) and get_linear_schedule_with_warmup
// (transformers/optimization.py), which step the scheduler after each optimizer step, so step k
// uses the factor at k. p is clamped so that steps past T (a resume with a larger --steps keeps
// T = the new --steps, so this does not happen there) stay at m instead of rising again.
#pragma once

#include <cstdint>

#include "planner/config/optimizer_spec.hpp"

namespace spplan::engine {

// REQUIRES: step >= 0, total_steps >= 1.
double lr_at(const OptimizerSpec& optimizer, int64_t step, int64_t total_steps);

}  // namespace spplan::engine
