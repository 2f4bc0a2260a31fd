// Evaluation loss on held-out tokens (--eval-data FILE --eval-every K): the mean token loss, by
// the same masking as training (data.hpp: --eos-id), of the file's first E sequences, E = one
// global batch (dp x micro_batch x grad_accum sequences; a file shorter than that wraps around as
// --data does). The same sequences every time, so the values of one run compare with each other.
// Forward only, one sequence at a time, no gradient; every rank takes part (the SP ranks of a
// sequence each hold part of it). Trainer::evaluate (train.hpp) is defined in eval.cpp.
#pragma once

#include <cstdint>

namespace spplan::engine {

struct EvalResult {
  double loss = 0;      // mean over the valid tokens
  int64_t tokens = 0;   // valid tokens counted
};

}  // namespace spplan::engine
