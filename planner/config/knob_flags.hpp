// The knob flags shared by `estimate`, `max-seq`, `run` and the GUI:
//   --sp P --cp R --cp-comm ring|allgather --zero 0|1|2|3 --offload-optimizer none|cpu|nvme --offload-params none|cpu|nvme
//   --act-ckpt none|full|offload --tiled-mlp --tiled-loss --micro-batch B --grad-accum K
//   --sp-comm-dtype bf16|fp32 --precision bf16|fp32 --reduce-bucket E --prefetch-bucket E
#pragma once

#include <vector>

#include "planner/config/knobs.hpp"
#include "planner/config/setting_ranges.hpp"
#include "planner/core/args.hpp"

namespace spplan {

// The knobs' ranges: the flags here and a plan file's [knobs] (plan_io.cpp) read them alike.
// 2^20 ranks, sequences or micro steps is past any cluster or batch; a bucket of 0 elements
// reduces nothing (reduce) while a prefetch of 0 prefetches nothing, which is a setting.
struct KnobRanges {
  IntRange sp{1, 1 << 20};
  IntRange cp{1, 1 << 20};
  IntRange zero_stage{0, 3};
  IntRange micro_batch{1, 1 << 20};
  IntRange grad_accum_steps{1, 1 << 20};
  NumberRange reduce_bucket_elems{1, kMaxNumber};
  NumberRange prefetch_bucket_elems{0, kMaxNumber};
};
inline constexpr KnobRanges kKnobRanges{};

// Flag specs to add to a subcommand that takes knobs (includes "sp").
std::vector<FlagSpec> knob_flag_specs();

// Applies every knob flag present in `args` onto `knobs` (absent flags keep their value).
Status apply_knob_flags(const Args& args, Knobs* knobs);

// True when any knob flag other than --sp and --cp is present (the user fixed the knobs).
bool has_knob_flags(const Args& args);

}  // namespace spplan
