#include "planner/search/knob_constraints.hpp"

#include <algorithm>
#include <string>

#include "planner/config/knob_flags.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"

namespace spplan::search {
namespace {

// Whether every knob set a search under `c` tries holds the probe's value of `key`: a key the
// search varies only when a flag fixes it; the rest are an (sp, cp) pair's (its layout, its one
// ring variant) or the base plan's (precision, nodes, kernel, the model's), unless the GPU count
// varies too (rent), and with it the layouts and nodes.
bool kept_by_search(const KnobConstraints& c, RuleKey key, bool gpus_vary) {
  switch (key) {
    case RuleKey::kLayout:
    case RuleKey::kSp:
    case RuleKey::kCp:
    case RuleKey::kCpComm:
    case RuleKey::kNodes: return !gpus_vary;
    case RuleKey::kZeroStage: return c.zero_stage.has_value();
    case RuleKey::kOffloadOptimizer: return c.offload_optimizer.has_value();
    case RuleKey::kOffloadParams: return c.offload_params.has_value();
    case RuleKey::kActCkpt: return c.act_ckpt.has_value();
    case RuleKey::kTiledMlp: return c.tiled_mlp.has_value();
    case RuleKey::kTiledLoss: return c.tiled_loss.has_value();
    case RuleKey::kMicroBatch: return c.micro_batch.has_value();
    case RuleKey::kGradAccumSteps: return c.grad_accum_steps.has_value() || c.micro_batch.has_value();  // batch_pairs
    default: return true;
  }
}

// A refusal that holds on every layout the flags leave, whatever the search varies (the model's
// experts on axolotl; a named kernel, hf's flash2 on a ring: `--attention flash2 --cp 4`): said as
// its own line, where the search would name the most frequent of the other refusals it meets
// (the layouts axolotl does not run; ZeRO 0 on hf's ring).
Status check_refused_whatever_searched(const PlanSpec& base, const Knobs& flags, const KnobConstraints& c,
                                       bool gpus_vary) {
  // A kernel nobody named is the layout's or the model's, not a flag's: said by its plan key.
  const WhereFn where = [&](const std::string& key) {
    return key == "attention" && !base.attention_named ? key : flag_where(key);
  };
  // The first refusal of a layout the trainer runs, else the first: a kernel refused on the ring
  // says more than a Ulysses x ring the trainer does not run.
  Status refusal = Status::ok(), of_a_run_layout = Status::ok();
  for (const auto& [sp, cp] : sp_cp_pairs(base, c)) {
    PlanSpec probe = base;
    probe.knobs = flags;
    probe.knobs.sp = sp;
    probe.knobs.cp = cp;
    probe.knobs.cp_comm = c.cp_comm.value_or(searched_cp_comm(probe));
    settle_layout_attention(&probe);  // the search's kernel for the pair, unless one is named
    const auto kept = [&](RuleKey key) { return kept_by_search(c, key, gpus_vary); };
    const Status refused = check_fixed_refusals(probe, kept, where);
    if (refused.is_ok()) return Status::ok();  // a layout may run: the search looks further
    if (refusal.is_ok()) refusal = refused;
    if (of_a_run_layout.is_ok() && layout_record(probe).runs) of_a_run_layout = refused;
  }
  return of_a_run_layout.is_ok() ? refusal : of_a_run_layout;
}

// A ring the flags pin where the GPU count varies (rent) is a ring alone or Ulysses x ring at every
// count: refused in the ring's line when the trainer runs neither, where each count would say
// "does not fit".
Status check_pinned_ring_runs(const PlanSpec& base, int64_t cp) {
  PlanSpec ring = base;
  ring.knobs.sp = 1;
  ring.knobs.cp = cp;
  ring.cluster.num_gpus = cp;
  PlanSpec hybrid = ring;
  hybrid.knobs.sp = 2;
  hybrid.cluster.num_gpus = 2 * cp;
  if (layout_record(ring).runs || layout_record(hybrid).runs) return Status::ok();
  return check_trainer_runs(ring, flag_where);
}

// A global batch that no layout's dp divides leaves nothing to search: said as its own line, with
// the data-parallel degrees the layouts have (rent varies the count, so each count decides there).
Status check_some_layout_divides(const PlanSpec& base, const KnobConstraints& c, bool gpus_vary) {
  if (gpus_vary) return Status::ok();
  std::vector<int64_t> dps;
  for (const auto& [sp, cp] : sp_cp_pairs(base, c)) {
    const int64_t dp = base.cluster.num_gpus / (sp * cp);
    if (*c.global_batch % dp == 0) return Status::ok();
    if (std::find(dps.begin(), dps.end(), dp) == dps.end()) dps.push_back(dp);
  }
  std::sort(dps.begin(), dps.end());
  std::string allowed;
  for (int64_t dp : dps) allowed += (allowed.empty() ? "" : ", ") + std::to_string(dp);
  return Status::invalid("--global-batch: value " + std::to_string(*c.global_batch) + " is not a multiple of the dp of any layout on " +
                         std::to_string(base.cluster.num_gpus) + " GPUs (allowed: a multiple of one of dp " + allowed + ")");
}

}  // namespace

Result<KnobConstraints> read_constraints(const Args& args, PlanSpec* base, bool gpus_vary) {
  Knobs k = base->knobs;
  SPPLAN_RETURN_IF_ERROR(apply_knob_flags(args, &k));
  base->knobs.precision = k.precision;
  base->knobs.grad_accum_steps = k.grad_accum_steps;
  base->knobs.sp_comm_dtype = k.sp_comm_dtype;
  base->knobs.reduce_bucket_elems = k.reduce_bucket_elems;
  base->knobs.prefetch_bucket_elems = k.prefetch_bucket_elems;
  SPPLAN_RETURN_IF_ERROR(settle_attention(base, args.has("attention"), flag_where));
  KnobConstraints c;
  if (args.has("sp")) {
    const std::vector<int64_t> valid = valid_sp_degrees(base->model, base->cluster.num_gpus);
    if (std::find(valid.begin(), valid.end(), k.sp) == valid.end()) {
      PlanSpec probe = *base;
      probe.knobs.sp = k.sp;
      probe.seq_len = 1;
      SPPLAN_RETURN_IF_ERROR(check_plan(probe, flag_where));
    }
    c.sp = k.sp;
  }
  if (args.has("cp")) {
    // cp has no head rule: it must divide the GPUs (by sp too, when sp is fixed).
    PlanSpec probe = *base;
    probe.knobs.sp = args.has("sp") ? k.sp : 1;
    probe.knobs.cp = k.cp;
    probe.seq_len = 2 * probe.knobs.sp * k.cp;  // the zigzag rule is the sequence's, checked per plan
    if (gpus_vary) probe.cluster.num_gpus = probe.knobs.sp * k.cp;  // rent tries the counts it divides
    SPPLAN_RETURN_IF_ERROR(check_context_parallel(probe, flag_where));
    c.cp = k.cp;
  }
  // A split the model runs with no other knobs (gpt-oss's sinks, a ring over a window): said as the
  // split's own line, not as "no knob set left" after the search.
  if (c.sp.value_or(1) > 1 || c.cp.value_or(1) > 1) {
    PlanSpec probe = *base;
    probe.knobs.sp = c.sp.value_or(1);
    probe.knobs.cp = c.cp.value_or(1);
    SPPLAN_RETURN_IF_ERROR(check_attention_sinks(probe, flag_where));
    settle_layout_attention(&probe);
    if (probe.seq_len > 0 && layout_record(probe).runs) SPPLAN_RETURN_IF_ERROR(check_sliding_window(probe, flag_where));
  }
  if (args.has("cp-comm")) c.cp_comm = k.cp_comm;
  if (args.has("zero")) c.zero_stage = k.zero_stage;
  if (args.has("micro-batch")) c.micro_batch = k.micro_batch;
  if (args.has("grad-accum")) c.grad_accum_steps = k.grad_accum_steps;
  if (args.has("offload-optimizer")) c.offload_optimizer = k.offload_optimizer;
  if (args.has("offload-params")) c.offload_params = k.offload_params;
  if (args.has("act-ckpt")) c.act_ckpt = k.act_ckpt;
  // Tiling fixed on or off (fixed on only, "does my setup without tiling fit?" could not be asked).
  if (args.has("tiled-mlp") || args.has("no-tiled-mlp")) c.tiled_mlp = k.tiled_mlp;
  if (args.has("tiled-loss") || args.has("no-tiled-loss")) c.tiled_loss = k.tiled_loss;
  if (args.has("risky")) c.ranking = Ranking::kSpeedOnly;
  if (auto v = args.get("global-batch")) {
    SPPLAN_ASSIGN_OR_RETURN(c.global_batch, parse_int("--global-batch", *v, 1, kMaxGlobalBatch));
    SPPLAN_RETURN_IF_ERROR(check_some_layout_divides(*base, c, gpus_vary));
  }
  if (gpus_vary && c.cp.value_or(1) > 1) SPPLAN_RETURN_IF_ERROR(check_pinned_ring_runs(*base, *c.cp));
  SPPLAN_RETURN_IF_ERROR(check_refused_whatever_searched(*base, k, c, gpus_vary));
  return c;
}

std::vector<FlagSpec> searched_knob_flag_specs() {
  // The knobs read_constraints turns into constraints: the search enumerates them unless given.
  const std::vector<std::string> searched{"sp", "cp", "zero", "offload-optimizer", "offload-params", "act-ckpt",
                                          "tiled-mlp", "tiled-loss", "no-tiled-mlp", "no-tiled-loss", "micro-batch",
                                          "grad-accum"};
  std::vector<FlagSpec> specs = knob_flag_specs();
  for (FlagSpec& f : specs) {
    if (std::find(searched.begin(), searched.end(), f.name) == searched.end()) continue;
    f.default_value = f.takes_value              ? "searched (the flag fixes it)"
                      : f.name.rfind("no-", 0) == 0 ? "searched: on and off (the flag fixes it off)"
                                                    : "searched: on and off (the flag fixes it on)";
  }
  specs.push_back({"global-batch", true,
                   "sequences per optimizer step, the recipe's: every plan keeps micro batch x accumulation x dp equal to it "
                   "(a layout whose dp does not divide it is left out)",
                   "an integer 1.." + std::to_string(kMaxGlobalBatch),
                   "none: accumulation as --grad-accum (1), so each plan's global batch is micro batch x dp (shown)"});
  specs.push_back({"risky", false,
                   "rank by speed alone: plans that leave less GPU memory free than the largest measured memory error "
                   "(they may not fit when they run) may rank first"});
  return specs;
}

Status no_candidate_status(const SearchResult& result, const PlanSpec& base) {
  const std::string what = base.model.name + " on " + std::to_string(base.cluster.num_gpus) + " GPUs";
  if (result.excluded_by_trainer.empty()) {
    // A rule no knob set passes may hold whatever the knobs are (the model's window against the
    // sequence, say): the base plan says which, where "fewer fixed knobs" would send the user off.
    if (base.seq_len > 0) SPPLAN_RETURN_IF_ERROR(check_plan(base, flag_where));
    return Status::invalid("knobs: the flags given leave no knob set that the plan rules allow for " + what +
                           " (allowed: fewer fixed knobs)");
  }
  int64_t total = 0;
  auto most = result.excluded_by_trainer.begin();
  for (auto it = result.excluded_by_trainer.begin(); it != result.excluded_by_trainer.end(); ++it) {
    total += it->second;
    if (it->second > most->second) most = it;
  }
  return Status::invalid(trainer_quoted(base) + " runs and launches none of the " + std::to_string(total) +
                         " knob sets searched for " + what + "; the most frequent cause (" + std::to_string(most->second) +
                         "): " + most->first);
}

}  // namespace spplan::search
