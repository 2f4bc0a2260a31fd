// What a plan's trainer runs beyond its record's defaults: the attention kernel (--attention) and a
// multimodal model's encoders frozen or trained (--freeze-encoders / --train-encoders). The CLI's
// commands and the GUI's stack choices read them here, after the trainer is loaded, so both take
// the same values and refuse the others with the same words.
#pragma once

#include <vector>

#include "planner/config/trainer_spec.hpp"
#include "planner/core/args.hpp"

namespace spplan {

// --attention K, --freeze-encoders, --train-encoders (the last two opposites).
std::vector<FlagSpec> stack_flag_specs();

// Those of `args` onto `stack`, loaded from its trainer: each given flag overrides the trainer's
// default. Whether the kernel was named is args.has("attention") (settle_attention).
Status apply_stack_flags(const Args& args, TrainingStack* stack);

}  // namespace spplan
