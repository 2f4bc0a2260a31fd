// The verdict a renter acts on: a plan's memory against the device, held against how wrong the
// planner measured itself on that GPU and trainer (measured_accuracy.hpp). A plan that fits by
// less than the largest measured memory error may not fit when it runs: it is marked so (amber in
// the GUI), not green.
#pragma once

#include <string>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan {

enum class Verdict { kFits, kFitsInsideError, kDoesNotFit };
// "fits", "fits_inside_error", "does_not_fit": the JSON's words.
std::string to_string(Verdict verdict);

struct MemoryVerdict {
  Verdict verdict = Verdict::kDoesNotFit;
  double margin_pct = 0;  // device memory left free at the peak, % of the device (negative: short)
  ErrorStats error;       // what the margin is held against (count 0: not validated there)
  std::string scope;      // "arctic on h100-80gb": whose runs measured that error
  // "fits with 10.2% of memory to spare, more than the largest measured memory error (4.1%, 12
  // runs of arctic on h100-80gb)", "fits with 0.4% to spare, inside the measured memory error
  // (max 14.8%, ...): it may not fit when it runs", "does not fit (...)".
  std::string words;
};

MemoryVerdict memory_verdict(const costmodel::Estimate& estimate, const ErrorStats& error, const std::string& scope);
// The memory error measured for the plan's trainer on the GPU it is measured as
// (GpuSpec::measured_as), and in `*scope` whose runs measured it; `accuracy` null: nothing measured.
ErrorStats measured_memory_error(const PlanSpec& plan, const MeasuredAccuracy* accuracy, std::string* scope);
// The plan's verdict against that error.
MemoryVerdict plan_verdict(const PlanSpec& plan, const costmodel::Estimate& estimate, const MeasuredAccuracy* accuracy);
// The measured band of a longest-sequence or smallest-count answer (max-seq, fit): the signed
// memory error of the plan's scope (as the verdict's) and the published longest runs of its trainer
// on its GPU. Its unsafe edge is the memory runs needed beyond the prediction: --conservative
// books that share of the device as headroom.
struct MemoryBand {
  ErrorStats error;
  std::string scope;
  RatioRange longest_runs;
  std::string longest_runs_scope;  // "arctic on h100-80gb": the trainer's runs on the GPU, any model
  // The headroom (share of the device) at the band's edge: `asked`, or the largest measured
  // under-prediction when that is larger.
  double conservative_headroom(double asked) const;
  // "peak memory predicted from 14.8% under to 3.1% over the measured (26 runs of h100-80gb): the
  // answer may be long by up to 14.8% of GPU memory", and the longest runs' ratios when there are
  // any; "not validated: ..." when nothing measured the scope.
  std::string words() const;
  // "; at its edge (--conservative, 5.5% of GPU memory left free) " + `answer` (the command's answer
  // at `edge_headroom`); "" when the runs never needed more than the prediction.
  std::string edge_words(double edge_headroom, const std::string& answer) const;
};
MemoryBand memory_band(const PlanSpec& plan, const MeasuredAccuracy* accuracy);

// Its largest value into plan->memory_error_pct (0: nothing measured), which the searches' ranking
// holds each plan's free memory against. Set it after the plan's GPU and trainer.
void hold_against_measured(PlanSpec* plan, const MeasuredAccuracy* accuracy);

}  // namespace spplan
