// OptimizerSpec: AdamW's learning rate, its schedule, weight decay, gradient clipping, betas and eps. A plan
// file's [optimizer] section (plan_io.cpp), the engine's flags (below), and what the exports write
// (export.cpp), so a plan trains with the same settings on every stack.
//
// Flags: --lr X --warmup-steps K --lr-schedule constant|cosine|linear --min-lr X
//        --weight-decay X --grad-clip X (0: no clipping) --train-steps K
//        --adam-beta1 X --adam-beta2 X --adam-eps X
// The struct's defaults are the engine's settings before these existed (lr 1e-3 constant, weight
// decay 0.1, no clipping): a plan file without [optimizer] and `spplan run` without a plan train as
// they did. Plans made by `spplan plan` / `estimate` start from fine_tuning_recipe() instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "planner/config/setting_ranges.hpp"
#include "planner/core/args.hpp"

namespace spplan {

// The shape of the learning rate after the warm-up (engine/run/lr_schedule.hpp has the formulas).
enum class LrSchedule { kConstant, kCosine, kLinear };
const std::vector<std::string>& lr_schedule_names();  // "constant", "cosine", "linear"
std::string to_string(LrSchedule schedule);

struct OptimizerSpec {
  double lr = 1e-3;            // the peak learning rate, reached after warmup_steps
  int64_t warmup_steps = 0;    // linear warm-up from 0 over this many optimizer steps
  LrSchedule lr_schedule = LrSchedule::kConstant;
  double min_lr = 0;           // where cosine and linear end (constant ignores it)
  double weight_decay = 0.1;   // decoupled (AdamW), on every parameter
  double grad_clip = 0;        // the global gradient L2 norm is clipped to this; 0: no clipping
  int64_t train_steps = 0;     // the run's optimizer steps, the schedule's horizon; 0: not known
  // AdamW's moment decays and epsilon: the LLaMA recipe, 0.9, 0.95, 1e-8 (arXiv:2302.13971 section
  // 2.2; Llama 2, arXiv:2307.09288 section 2.2, the same), which long-context continued training
  // keeps. ArcticTraining and the HF Trainer default beta2 to 0.999: every export states these.
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.95;
  double adam_eps = 1e-8;
};

// torch.optim.AdamW's ranges: 0 <= beta < 1 (a beta of 1 never forgets: the moments never move),
// eps > 0; an eps beyond 1e-2 swamps the second moment of any bf16 gradient.
inline constexpr double kMaxAdamBeta = 0.999999;
inline constexpr double kMinAdamEps = 1e-20;
inline constexpr double kMaxAdamEps = 1e-2;

// The settings' ranges: the flags below and a plan file's [optimizer] (plan_io.cpp) read them alike.
// A learning rate above 1, a weight decay above 1 (AdamW would shrink each weight past zero in one
// step at lr 1) or a warm-up beyond 1e9 steps is a typo, not a setting; train_steps 0 is "not
// known" (the run's --steps span the schedule), what a plan made without --train-steps holds.
struct OptimizerRanges {
  NumberRange lr{kMinPositive, 1.0};
  IntRange warmup_steps{0, 1'000'000'000};
  NumberRange min_lr{0.0, 1.0};
  NumberRange weight_decay{0.0, 1.0};
  NumberRange grad_clip{0.0, kMaxNumber};
  IntRange train_steps{0, 1'000'000'000};
  NumberRange adam_beta{0.0, kMaxAdamBeta};
  NumberRange adam_eps{kMinAdamEps, kMaxAdamEps};
};
inline constexpr OptimizerRanges kOptimizerRanges{};

// What `spplan plan` and `estimate` put in a plan: a full fine-tune of a pretrained model on long
// sequences, each value from a published long-context recipe (optimizer_spec.cpp cites them).
OptimizerSpec fine_tuning_recipe();

// The warm-up a run of `train_steps` gets when none is given: ArcticTraining's warmup_ratio 0.1
// (arctic_training/scheduler/hf_factory.py: int(warmup_ratio * training_horizon)).
int64_t default_warmup_steps(int64_t train_steps);

// The keys of [optimizer], in the order plan files write them.
const std::vector<std::string>& optimizer_keys();

// min_lr <= lr. `where` names a key's source ("--min-lr" or "plan.toml: key \"optimizer.min_lr\"").
Status check_optimizer(const OptimizerSpec& o, const std::function<std::string(const std::string& key)>& where);

// The optimizer's flags; `defaults` is what a run or plan takes where a flag is absent (help shows it):
// fine_tuning_recipe() for plan / estimate, OptimizerSpec{} for the engine's own runs.
std::vector<FlagSpec> optimizer_flag_specs(const OptimizerSpec& defaults = OptimizerSpec{});
// Applies every optimizer flag present in `args` (absent flags keep their value); "--lr" etc.
// name the flag in messages. --train-steps without --warmup-steps also sets the warm-up to
// default_warmup_steps. Does not call check_optimizer (the caller knows both sources).
Status apply_optimizer_flags(const Args& args, OptimizerSpec* o);
// "--min-lr" for "min_lr".
std::string optimizer_flag(const std::string& key);

}  // namespace spplan
