#include "planner/accuracy/memory_verdict.hpp"

#include <algorithm>

#include "planner/core/parse.hpp"

namespace spplan {
namespace {

// "12 runs of arctic on h100-80gb", "1 run of h100-80gb".
std::string runs_of(const ErrorStats& error, const std::string& scope) {
  return std::to_string(error.count) + (error.count == 1 ? " run of " : " runs of ") + scope;
}

}  // namespace

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFits: return "fits";
    case Verdict::kFitsInsideError: return "fits_inside_error";
    case Verdict::kDoesNotFit: return "does_not_fit";
  }
  return "";
}

MemoryVerdict memory_verdict(const costmodel::Estimate& e, const ErrorStats& error, const std::string& scope) {
  MemoryVerdict v;
  v.error = error;
  v.scope = scope;
  v.margin_pct = e.free_memory_pct();
  if (!e.fits) {
    v.verdict = Verdict::kDoesNotFit;
    v.words = "does not fit (" + e.reason() + ")";
    return v;
  }
  const std::string spare = "fits with " + format_number("%.1f", v.margin_pct) + "% of GPU memory to spare";
  if (error.count == 0) {
    v.verdict = Verdict::kFits;
    v.words = spare + "; no measured memory error for " + scope + " to hold it against";
    return v;
  }
  const std::string measured = format_number("%.1f", error.max_abs_pct) + "%, " + runs_of(error, scope);
  // The largest error, not the mean: a renter loses the run on the one case the mean hides.
  if (v.margin_pct > error.max_abs_pct) {
    v.verdict = Verdict::kFits;
    v.words = spare + ", more than the largest measured memory error (" + measured + ")";
  } else {
    v.verdict = Verdict::kFitsInsideError;
    v.words = spare + ", inside the largest measured memory error (" + measured +
              "): it may not fit when it runs (--headroom PCT asks for more)";
  }
  return v;
}

ErrorStats measured_memory_error(const PlanSpec& plan, const MeasuredAccuracy* accuracy, std::string* scope) {
  const std::string& gpu = plan.cluster.gpu.measured_as();
  *scope = plan.stack.trainer + " on " + gpu;
  return accuracy ? accuracy->memory_error(gpu, plan.stack.trainer, scope) : ErrorStats{};
}

MemoryVerdict plan_verdict(const PlanSpec& plan, const costmodel::Estimate& estimate, const MeasuredAccuracy* accuracy) {
  std::string scope;
  const ErrorStats error = measured_memory_error(plan, accuracy, &scope);
  return memory_verdict(estimate, error, scope);
}

double MemoryBand::conservative_headroom(double asked) const {
  return std::max(asked, error.max_under_pct / 100.0);
}

std::string MemoryBand::words() const {
  if (error.count == 0) return "not validated: no run measured the peak memory of " + scope;
  std::string text = "peak memory predicted from " + format_number("%.1f", error.max_under_pct) + "% under to " +
                     format_number("%.1f", error.max_over_pct) + "% over the measured (" + runs_of(error, scope) + "): ";
  text += error.max_under_pct > 0
              ? "the answer may be long by up to " + format_number("%.1f", error.max_under_pct) + "% of GPU memory"
              : "the answer errs on the short side";
  if (longest_runs.count > 0) {
    text += "; max-seq answers " + format_number("%.2f", longest_runs.min) + "-" + format_number("%.2f", longest_runs.max) +
            "x the lengths of " + std::to_string(longest_runs.count) + " published longest runs of " + longest_runs_scope +
            ", for their models and knobs (lengths that ran, not edges)";
  }
  return text;
}

std::string MemoryBand::edge_words(double edge_headroom, const std::string& answer) const {
  if (error.max_under_pct <= 0) return "";
  return "; at its edge (--conservative, " + format_number("%.1f", 100 * edge_headroom) + "% of GPU memory left free) " +
         answer;
}

MemoryBand memory_band(const PlanSpec& plan, const MeasuredAccuracy* accuracy) {
  MemoryBand band;
  band.error = measured_memory_error(plan, accuracy, &band.scope);
  const std::string& gpu = plan.cluster.gpu.measured_as();
  band.longest_runs_scope = plan.stack.trainer + " on " + gpu;
  if (accuracy) band.longest_runs = accuracy->for_trainer(gpu, plan.stack.trainer).longest_runs;
  return band;
}

void hold_against_measured(PlanSpec* plan, const MeasuredAccuracy* accuracy) {
  std::string scope;
  const ErrorStats error = measured_memory_error(*plan, accuracy, &scope);
  plan->memory_error_pct = error.count > 0 ? error.max_abs_pct : 0;
}

}  // namespace spplan
