// Evaluation loss on held-out tokens (--eval-data FILE --eval-every K): the mean token loss, by
// the same masking as training (data.hpp: --eos-id), over every whole sequence the files hold
// (W = (tokens - 1) / seq windows, read in order, none twice: as the Hugging Face Trainer evaluates
// its whole eval set). The same sequences every time, so the values of one run compare with each
// other. Forward only, one sequence at a time, no gradient; every rank takes part (the SP ranks of
// a sequence each hold part of it; DP group g takes windows g, g + dp, ...; a group past the last
// window runs a fully masked one, so every rank makes the same collectives).
// Trainer::evaluate (train.hpp) is defined in eval.cpp.
#pragma once

#include <cstdint>

namespace spplan::engine {

struct EvalResult {
  double loss = 0;      // mean over the valid tokens
  int64_t tokens = 0;   // valid tokens counted
};

}  // namespace spplan::engine
