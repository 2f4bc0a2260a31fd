// What the costmodel prices a plan's model as, in words: its RoPE, a multimodal config's encoders
// (trained, frozen or holding weights only), a sliding window the sequence passes, a mixture of
// experts. One wording for `spplan estimate`'s report and the GUI's model line.
#pragma once

#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"

namespace spplan::costmodel {

// Each line without indent or newline; "" where the model has no such part (rope is never "").
struct PricedModelLines {
  std::string rope;      // "RoPE: llama3 (factor 8, ...) (theta 500000); q/k/v biases"
  std::string encoders;  // "model: the language model of a multimodal config and its vision encoder, ..."
  std::string window;    // "attention: a 1024-token sliding window on 5 of 6 layers"
  std::string mixture;   // "mixture: 128 experts 768 wide, 8 a token; ..."

  // The lines the model has, in the order above.
  std::vector<std::string> present() const;
};
PricedModelLines priced_model_lines(const PlanSpec& plan);

}  // namespace spplan::costmodel
