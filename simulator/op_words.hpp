// An op's id in words, for people: "gather.m0.rec.L30" -> "layer 30, recompute, parameter gather".
// The ids are the step graph's (step_graph_*.cpp): [gather.|fetch.]m<micro>.<pass>.L<layer>[.<part>[.t<k>]],
// m<micro>.loss.fwd|bwd[.t<k>], m<micro>.embed.fwd|bwd, m<micro>.head, m<micro>.ckpt_d2h|ckpt_h2d|reduce.L<layer>,
// m<micro>.reduce.embed, opt.adam|grad_d2h|param_h2d|param_allgather. A micro step after the first
// is named ("micro step 2, ...", counted from 1 as people count); an id that does not follow the
// grammar is returned as it is.
#pragma once

#include <string>
#include <vector>

#include "simulator/simulate.hpp"

namespace spplan::sim {

std::string op_in_words(const std::string& op_id);

// Where a phase of a simulated step begins: each micro step's forward (its embedding's forward)
// and backward (its loss's backward, the first tile), and the optimizer step (its first op).
// `words` as op_in_words names the micro step: "forward", "micro step 2, backward", "optimizer".
struct PhaseStart {
  double time_s = 0;
  std::string words;
};
// The phase starts among `events`, by time.
std::vector<PhaseStart> phase_starts(const std::vector<SimEvent>& events);

}  // namespace spplan::sim
