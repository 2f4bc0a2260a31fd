// The range of a numeric setting that a flag and a file both give (`--grad-accum` and a plan's
// `knobs.grad_accum_steps`, `--price-per-gpu-hour` and a GPU file's `price_per_gpu_hour`). Each
// setting's range is one constant beside its struct (knob_flags.hpp, optimizer_spec.hpp,
// renter_settings.hpp), which its flag parser and every file reader of it pass on, so a value one
// refuses the other refuses too, in the same words: "(allowed: a whole number from 1 to 1048576)".
#pragma once

#include <cstdint>
#include <string_view>

#include "planner/core/parse.hpp"

namespace spplan {

struct IntRange {
  int64_t min = 0;
  int64_t max = 0;
};

struct NumberRange {
  double min = 0;
  double max = 0;
};

// A flag's value in its setting's range (parse_int / parse_double, whose message a file reader's
// KeyReader::read_int / read_bounded repeats for a key).
inline Result<int64_t> parse_in(std::string_view flag, std::string_view text, IntRange range) {
  return parse_int(flag, text, range.min, range.max);
}
inline Result<double> parse_in(std::string_view flag, std::string_view text, NumberRange range) {
  return parse_double(flag, text, range.min, range.max);
}

}  // namespace spplan
