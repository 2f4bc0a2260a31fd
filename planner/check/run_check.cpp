#include "planner/check/run_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "planner/config/plan_rules.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/costmodel/host_cpu.hpp"
#include "planner/costmodel/host_run.hpp"
#include "planner/core/units.hpp"

namespace spplan::check {
namespace {

std::string num(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string gib_text(double bytes) { return num("%.2f", bytes / kGiB) + " GiB"; }

// What the allocator holds at the peak (the engine's prediction: the total less the CUDA context,
// NCCL and slack, which max_memory_allocated does not see).
double allocated_bytes(const costmodel::Estimate& e) { return e.memory.total_bytes() - e.memory.overhead_bytes; }

// The plan with its sequence unsplit: sp = cp = 1 on the same GPUs (the rest data parallel), what a
// run whose split was configured but not applied holds per rank.
std::optional<costmodel::Estimate> unsplit_estimate(const PlanSpec& plan) {
  PlanSpec one = plan;
  one.knobs.sp = 1;
  one.knobs.cp = 1;
  if (!check_plan(one, flag_where)) return std::nullopt;
  return costmodel::estimate(one);
}

bool from_engine(const RunMeasurements& run) {
  for (const std::string& f : run.formats) {
    if (f.rfind("spplan-run", 0) == 0) return true;
  }
  return false;
}

std::string layout(int64_t sp, int64_t cp) { return "sp " + std::to_string(sp) + " x cp " + std::to_string(cp); }

const char* const kNotSplitCause =
    "the sequence is not split: sequence parallelism configured but not applied (verl#7476: "
    "ulysses_sequence_parallel_size a no-op, full-length activations on every rank; an HF Trainer run whose "
    "ParallelismConfig was dropped; a ring plan launched without cp)";

// What measured the compared peak, in words. A memory snapshot read alone measured it from its own
// records (the trace's running sum of allocations, its segments), not from torch's peak counters;
// read with other logs, the peak is the largest any of them gave.
std::string measured_as(MemoryMeasure measure, const RunMeasurements& run) {
  const bool snapshot_only = run.formats == std::vector<std::string>{"torch-memory-snapshot"};
  switch (measure) {
    case MemoryMeasure::kAllocated:
      return snapshot_only ? "allocator peak (memory snapshot: its trace's largest allocated)"
                           : "allocator peak (max_memory_allocated)";
    case MemoryMeasure::kReserved:
      return snapshot_only ? "allocator reserved (memory snapshot: its segments at their largest)"
                           : "allocator reserved (max_memory_reserved)";
    case MemoryMeasure::kDevice:
      return "device (nvidia-smi memory.used)";
    case MemoryMeasure::kNone:
      break;
  }
  return "";
}

void memory_findings(const PlanSpec& plan, const RunMeasurements& run, const Band& band, const costmodel::Estimate& e,
                     CheckReport* report) {
  Comparison c{"peak_memory", "", 0, 0};
  double unsplit = 0;
  const auto one = unsplit_estimate(plan);
  const MemoryMeasure measure = compared_memory(run);  // merge_into keeps the samples of this peak
  c.measured_as = measured_as(measure, run);
  if (measure == MemoryMeasure::kAllocated) {
    c.measured = *run.peak_allocated_bytes;
    c.predicted = allocated_bytes(e);
    if (one) unsplit = allocated_bytes(*one);
  } else if (measure != MemoryMeasure::kNone) {
    const bool device = measure == MemoryMeasure::kDevice;
    c.measured = device ? *run.device_used_bytes : *run.peak_reserved_bytes;
    c.predicted = e.memory.needed_bytes();
    if (one) unsplit = one->memory.needed_bytes();
  } else {
    return;
  }
  report->comparisons.push_back(c);
  for (const Finding& f : report->findings) {
    if (f.id == "not_split") return;  // the run's own report said so
  }
  // How far a run of this trainer and GPU went above its prediction, at least 10%.
  const double over = std::max(band.memory.max_under_pct, 10.0) / 100.0;
  if (c.measured <= c.predicted * (1 + over)) return;
  if (unsplit > c.predicted * 1.25 && c.measured >= (c.predicted + unsplit) / 2) {
    report->findings.push_back({"not_split",
                                "peak memory " + gib_text(c.measured) + " per rank is near the " + gib_text(unsplit) +
                                    " predicted at sp x cp = 1, not the plan's " + gib_text(c.predicted) + " at " +
                                    layout(plan.knobs.sp, plan.knobs.cp),
                                kNotSplitCause, true});
    return;
  }
  report->findings.push_back({"memory_above_band",
                              "peak memory " + gib_text(c.measured) + " is " + num("%.1f", -c.error_pct()) +
                                  "% above the predicted " + gib_text(c.predicted) + ", beyond the measured band",
                              "memory the plan does not count (a larger micro batch, a kernel without the tiling, "
                              "allocator fragmentation); `spplan calibrate --from-run` adds this run to the band",
                              false});
}

// The term of the predicted step most likely to be off when a run is slower than the plan.
std::string likely_term(const costmodel::Estimate& e) {
  const costmodel::TimeBreakdown& t = e.time;
  const std::pair<const char*, double> terms[] = {{"exposed Ulysses all-to-all", t.exposed_a2a_s},
                                                  {"exposed ring-attention traffic", t.exposed_cp_s},
                                                  {"exposed ZeRO communication", t.exposed_zero_s},
                                                  {"exposed offload copies", t.exposed_offload_s},
                                                  {"the optimizer step", t.optimizer_s}};
  const auto* top = std::max_element(std::begin(terms), std::end(terms),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top->second < 0.1 * t.step_time_s) {
    return "compute: the kernels run slower than the GPU file says (spplan calibrate on that GPU), or the "
           "attention kernel is not the plan's";
  }
  return std::string(top->first) + " (" + num("%.3g", top->second) + " s of the predicted " + num("%.3g", t.step_time_s) +
         " s): the links or the host are slower than the GPU file says";
}

void speed_findings(const PlanSpec& plan, const RunMeasurements& run, const costmodel::Estimate& e, bool speed_known,
                    CheckReport* report) {
  const std::optional<double> measured_s = steady_step_time_s(run);
  // 0: no prediction for the machine it ran on (a CPU no `spplan calibrate` measured).
  const double predicted_s = speed_known ? e.time.step_time_s : 0;
  if (measured_s && predicted_s > 0) {
    report->comparisons.push_back({"step_time", "mean step after the first", predicted_s, *measured_s});
    const double ratio = *measured_s / predicted_s;
    if (ratio > 2) {
      report->findings.push_back({"step_time_far", "steps take " + num("%.3g", *measured_s) + " s, " +
                                                       num("%.1f", ratio) + " x the predicted " +
                                                       num("%.3g", predicted_s) + " s",
                                  likely_term(e), false});
    } else if (ratio < 0.5) {
      report->findings.push_back({"step_time_far", "steps take " + num("%.3g", *measured_s) + " s, " +
                                                       num("%.2f", ratio) + " x the predicted " +
                                                       num("%.3g", predicted_s) + " s",
                                  "less work than the plan: fewer tokens per step than it says, or a split whose "
                                  "attention does not reach across ranks (Megatron-Bridge#2667: cp_comm_type a2a+p2p "
                                  "without its sizes disabled CP)",
                                  false});
    }
  }
  std::optional<double> tps = run.tokens_per_s;
  if (!tps && run.tokens_seen && run.steps && measured_s) tps = *run.tokens_seen / static_cast<double>(*run.steps) / *measured_s;
  if (tps && e.tokens_per_s > 0) {
    if (predicted_s > 0) report->comparisons.push_back({"tokens_per_s", "whole run", e.tokens_per_step / predicted_s, *tps});
    // The plan's model FLOPs per token at the measured rate, over the GPUs' peak.
    const double mfu = e.mfu * *tps / e.tokens_per_s;
    if (mfu > 1) {
      report->findings.push_back({"above_peak",
                                  num("%.0f", *tps) + " tokens/s is " + num("%.0f", 100 * mfu) +
                                      "% of what the GPUs' peak allows for this model and length",
                                  "tokens counted on every rank, or the split is not attending across ranks "
                                  "(Megatron-Bridge#2667: throughput above the GPU's peak with CP silently disabled)",
                                  true});
    }
  }
  if (run.tflops_per_gpu && plan.cluster.gpu.bf16_tflops > 0 && *run.tflops_per_gpu > plan.cluster.gpu.bf16_tflops) {
    report->findings.push_back({"above_peak",
                                num("%.0f", *run.tflops_per_gpu) + " TFLOPS per GPU logged, above the GPU's peak " +
                                    num("%.0f", plan.cluster.gpu.bf16_tflops),
                                "FLOPs counted for the whole sequence on every rank, or the split is not attending "
                                "across ranks (Megatron-Bridge#2667)",
                                true});
  }
}

void count_findings(const PlanSpec& plan, const RunMeasurements& run, const costmodel::Estimate& e, CheckReport* report) {
  const int64_t ranks = plan.knobs.sp * plan.knobs.cp;
  if (run.tokens_seen && run.steps && *run.steps > 0 && e.tokens_per_step > 0 && ranks > 1) {
    const double ratio = *run.tokens_seen / static_cast<double>(*run.steps) / e.tokens_per_step;
    if (std::fabs(ratio / static_cast<double>(ranks) - 1) < 0.1) {
      // With sp > 1 the Ulysses ranks of a working split each read a shard (accelerate's
      // UlyssesSPDataLoaderAdapter), so sp x the tokens means they read different samples.
      report->findings.push_back(
          {plan.knobs.sp > 1 ? "not_split" : "tokens_times_ranks",
           "the logged token count is " + num("%.2f", ratio) + " x the plan's " + num("%.0f", e.tokens_per_step) +
               " tokens a step: sp x cp = " + std::to_string(ranks),
           plan.knobs.sp > 1 ? "the ranks of a sequence group read different samples: the sequence is not split; "
                               "or each rank counted the whole sequence (transformers 5.24.0 trainer.py "
                               "_track_num_input_tokens gathers num_input_tokens_seen from every process)"
                             : "counted per rank: transformers 5.24.0 trainer.py _track_num_input_tokens gathers "
                               "num_input_tokens_seen from every process, CP ranks holding the whole sequence included",
           plan.knobs.sp > 1});
    }
  }
  if (run.eval_loss && run.train_loss && *run.train_loss > 0 && plan.knobs.cp > 1) {
    const double ratio = *run.eval_loss / *run.train_loss;
    if (std::fabs(ratio / static_cast<double>(plan.knobs.cp) - 1) < 0.15) {
      report->findings.push_back({"eval_loss_times_cp",
                                  "eval loss " + num("%.3g", *run.eval_loss) + " is " + num("%.2f", ratio) +
                                      " x the train loss " + num("%.3g", *run.train_loss) + ": cp = " +
                                      std::to_string(plan.knobs.cp),
                                  "the eval loss summed over the CP ranks, not averaged (transformers#48167); the "
                                  "training itself may be as planned",
                                  false});
    }
  }
}

// What the run says it built (the engine reports its degrees), against the plan.
void layout_findings(const PlanSpec& plan, const RunMeasurements& run, CheckReport* report) {
  if (run.sp <= 0) return;
  const int64_t run_cp = std::max<int64_t>(run.cp, 1);
  if (run.sp == plan.knobs.sp && run_cp == plan.knobs.cp) return;
  const std::string words = "the run reports " + layout(run.sp, run_cp) + ", the plan " + layout(plan.knobs.sp, plan.knobs.cp);
  if (run.sp * run_cp == 1) {
    report->findings.push_back({"not_split", words, kNotSplitCause, true});
  } else {
    report->findings.push_back({"layout_differs", words, "the launch does not pass the plan's degrees", true});
  }
}

// The plan as the run's stack executes it: spplan's engine runs any plan with its own software
// behaviour, and on a CPU every rank on this machine's CPU (engine/run/predict.cpp priced_plan).
// `*speed_known`: false on a CPU that `spplan calibrate` never measured (the engine then reports
// no predicted step time either).
PlanSpec as_run(const PlanSpec& plan, const RunMeasurements& run, bool* speed_known) {
  *speed_known = true;
  if (!from_engine(run)) return plan;
  PlanSpec engine = plan;
  engine.stack = trainer_stack("engine");
  if (run.ran_on_cpu) {
    engine.cluster.gpu = costmodel::this_cpu_host(plan.cluster.gpu, speed_known);
    engine.cluster.gpu.gpus_per_node = plan.cluster.num_gpus;
  }
  return costmodel::as_priced(engine);
}

}  // namespace

bool CheckReport::as_planned() const {
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.not_the_plan; });
}

CheckReport check_run(const PlanSpec& given_plan, const RunMeasurements& run, const Band& band) {
  CheckReport report;
  bool speed_known = true;
  const PlanSpec plan = as_run(given_plan, run, &speed_known);
  const costmodel::Estimate e = costmodel::estimate(plan);
  layout_findings(plan, run, &report);
  memory_findings(plan, run, band, e, &report);
  speed_findings(plan, run, e, speed_known, &report);
  count_findings(plan, run, e, &report);
  return report;
}

std::string band_words(const ErrorStats& all, const ErrorStats& yours, const std::string& scope) {
  if (all.count == 0) return "not validated (no run of " + scope + ")";
  std::string text = "measured error " + num("%.1f", all.mean_abs_pct) + "%, max " + num("%.1f", all.max_abs_pct) + "% (" +
                     std::to_string(all.count) + " runs of " + scope;
  if (yours.count > 0) {
    text += "; " + std::to_string(yours.count) + " of your runs: " + num("%.1f", yours.mean_abs_pct) + "%, max " +
            num("%.1f", yours.max_abs_pct) + "%";
  }
  return text + ")";
}

}  // namespace spplan::check
