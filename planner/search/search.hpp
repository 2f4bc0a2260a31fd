// Plan search on top of the costmodel: enumerate the knobs, keep what fits, rank; the smallest
// cluster that fits; the longest sequence that fits; sweeps over sequence length.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::search {

struct RankedPlan {
  PlanSpec plan;
  costmodel::Estimate estimate;
};

struct Rejected {
  Knobs knobs;
  std::string reason;  // from the estimate ("GPU memory: needs ...") or the plan rules
  costmodel::Estimate::Limit limit = costmodel::Estimate::Limit::kNone;
  double need_over_have = 0;  // how far over its limit: 1.25 needs 25% more than there is
};

struct SearchResult {
  std::vector<RankedPlan> feasible;  // best first: rank_plans() order
  std::vector<Rejected> rejected;
  int64_t evaluated = 0;
  // Knob sets left out before pricing because the trainer cannot run them, by rule message
  // (check_trainer_runs: `--trainer engine` has no NVMe offload, ...), with their counts.
  std::map<std::string, int64_t> excluded_by_trainer;
};

// "GPU memory", "host memory per node", "the attention kernel's index range": the name of the
// limit a rejection hit.
std::string limit_name(costmodel::Estimate::Limit limit);

// The searched knobs a user fixed (`plan --zero 2 --offload-params none`): the searches keep
// only candidates that agree with every field set. Knobs the searches do not enumerate (precision,
// grad_accum_steps, sp_comm_dtype, buckets) are fixed on the base plan instead.
// How the searches order the plans that fit.
enum class Ranking {
  kSafeFirst,  // every safe plan (is_safe) before every other; each group ranked as rank_plans_by says
  kSpeedOnly,  // `--risky`: by speed alone, the memory margin only a preference inside a noise band
};

struct KnobConstraints {
  std::optional<int64_t> sp, cp, zero_stage, micro_batch, grad_accum_steps;
  std::optional<CpComm> cp_comm;
  std::optional<OffloadDevice> offload_optimizer, offload_params;
  std::optional<ActCkpt> act_ckpt;
  std::optional<bool> tiled_mlp, tiled_loss;
  // Sequences per optimizer step every plan trains (`--global-batch N`): micro batch x accumulation
  // x dp = N, so the search changes the speed, never the recipe; a layout whose dp does not divide
  // it is left out (counted). Unset: accumulation stays the base plan's (1 unless --grad-accum), and
  // each plan's global batch is micro batch x accumulation x dp.
  std::optional<int64_t> global_batch;
  // Not a knob: the order the searches rank in (`--risky` asks for kSpeedOnly). Carried here because
  // every search (plan, fit, rent, the GUI) takes the user's flags through this one struct.
  Ranking ranking = Ranking::kSafeFirst;

  bool allows(const Knobs& k) const;
};

// The (Ulysses, ring) degree pairs the search tries: sp over the degrees the heads allow, cp over
// the divisors of GPUs / sp; only those the constraints allow (fixing one does not fix the other).
std::vector<std::pair<int64_t, int64_t>> sp_cp_pairs(const PlanSpec& base, const KnobConstraints& constraints);

// Every knob combination worth trying for `base` ((sp, cp) over the valid pairs, the ring variant
// only unless cp_comm is fixed (the all-gather variant is never faster and holds more), ZeRO 0-3, offloads,
// checkpointing, tiling, and micro batch 1/2/4 at the base plan's accumulation, or with a global
// batch every (micro batch, accumulation) pair of 1/2/4 that makes it on the layout's dp) that
// `constraints` allow; combinations the plan rules forbid, the trainer does not run, none of its
// formats launches or the global batch does not divide are left out (counted in
// excluded_by_trainer by reason).
std::vector<Knobs> candidate_knobs(const PlanSpec& base, const KnobConstraints& constraints = {},
                                   std::map<std::string, int64_t>* excluded_by_trainer = nullptr);

// Evaluates every candidate at base.seq_len. `keep_rejected` records why each one failed. The plans
// that fit are ranked by constraints.ranking.
SearchResult search_plans(const PlanSpec& base, bool keep_rejected, const KnobConstraints& constraints = {});

// True when `a` ranks before `b` (tokens/s desc, then peak memory asc, then $/Mtok asc).
bool ranks_before(const RankedPlan& a, const RankedPlan& b);

// Throughput differences below this fraction are noise: the costmodel's step times are validated
// to within several percent (README, validation), far from the 0.03% that once separated
// micro batch 2 from 1 while doubling the global batch.
inline constexpr double kRankNoiseBand = 0.02;

// The free GPU memory a plan's trainer and GPU have no measured memory error to hold against: the
// largest error measured for any trainer on any GPU in validation/results (14.8%, liger on
// h100-80gb, at the time of writing), rounded up. A stack nobody measured is not known to err less
// than the worst one that was.
inline constexpr double kUnmeasuredHeadroomPct = 15.0;

// The share of the device (%) a plan must leave free to be safe: the largest memory error measured
// for its trainer on its GPU (PlanSpec::memory_error_pct), or kUnmeasuredHeadroomPct when none was.
double safe_margin_pct(const PlanSpec& plan);

// True when the plan fits and leaves more GPU memory free than safe_margin_pct: with a measured
// error exactly the verdict "fits" (planner/accuracy memory_verdict), not "fits_inside_error".
bool is_safe(const RankedPlan& p);

// `plan` asking every plan to be safe: its headroom (PlanSpec::memory_headroom) a hair above
// safe_margin_pct, or the one it had when larger. What max-seq's and fit's safe answers search.
PlanSpec with_safe_headroom(const PlanSpec& plan);

// "safe" or "risky": the group a ranked plan is in, as the tables and JSON name it.
const char* group_name(const RankedPlan& p);

// What a plan's free memory is held against, in words: "a 14.8% measured error" or, where none was
// measured for its trainer and GPU, "the 15.0% default headroom".
std::string held_against_words(const PlanSpec& plan);

// "24% faster than the best safe plan, 0.4% free against a 14.8% measured error": a risky plan
// beside the safe one it outruns, as the CLI's tables and the GUI's banner say it.
std::string risky_beside_safe_words(const RankedPlan& risky, const RankedPlan& safe);

// What the ranking says about itself, for reports: inside each group (safe first, unless --risky).
inline constexpr const char* kRankingRule =
    "tokens/s; plans within 2% of the leader of their band are ordered by more GPU memory free than the "
    "largest memory error measured for the trainer on the GPU, then a smaller ring (cp), then fewer "
    "offloads, then smaller micro batch, then less GPU memory";

// The whole rule, as `plan` prints it after "ranked ": kRankingRule, with "safe plans first" before
// it unless `ranking` is kSpeedOnly.
std::string ranking_rule(Ranking ranking);

// Sorts best first (safe plans first under kSafeFirst, each group alone): by tokens/s, then inside each noise band (every plan within kRankNoiseBand of
// the band's fastest plan) by what a user prefers when the speed is the same: a plan that fits by
// more than the planner's measured memory error (PlanSpec::memory_error_pct), a smaller ring, fewer offloads
// (optimizer, parameters, checkpoints), a smaller micro batch (the global batch is a training
// choice, not a speed-up), less GPU memory.
void rank_plans(std::vector<RankedPlan>* plans, Ranking ranking = Ranking::kSafeFirst);

// The same ranking with another measure of speed (tokens/s from the simulator for
// `plan --simulate`): the noise band and the preferences apply alike.
void rank_plans_by(std::vector<RankedPlan>* plans, const std::function<double(const RankedPlan&)>& tokens_per_s,
                   Ranking ranking = Ranking::kSafeFirst);

// The first risky plan faster than the first safe one (both in `ranked`, rank_plans order), what
// the tables show beside row 1; null when no risky plan is faster or no plan is safe.
const RankedPlan* fastest_risky_beyond_best_safe(const std::vector<RankedPlan>& ranked);

// True when the plan leaves no more GPU memory free than the largest memory error measured for its
// trainer on its GPU (PlanSpec::memory_error_pct; never when nothing was measured): it may not fit
// when it runs (planner/accuracy's verdict "fits_inside_error").
bool inside_measured_error(const RankedPlan& p);

// The offloads a plan uses (optimizer, parameters, checkpoints), 0 to 3.
int offload_count(const Knobs& k);

// The smallest GPU count at which some plan fits, up to `max_gpus`: every count up to one node,
// then whole nodes (doubling to the first that fits, then each node count below it; past 64 node
// counts between, the gap is halved first, so beyond 512 nodes the count found fits but a smaller
// one that the halving stepped over, at a count whose divisors the sp degrees need, may too).
std::optional<int64_t> smallest_fitting_gpus(const PlanSpec& base, int64_t max_gpus,
                                             const KnobConstraints& constraints = {});

// The longest sequence the max-seq searches try: 1G tokens (2^30), 70x beyond any published
// Ulysses run (15M, ALST). An answer at this cap means "at least": reported as such.
inline constexpr int64_t kMaxSearchedSeqLen = int64_t{1} << 30;

// True when `seq_len` is the longest multiple of `granularity` the searches try (the answer is a
// lower bound: longer sequences were not tried).
bool at_search_cap(int64_t seq_len, int64_t granularity);

// Longest sequence (multiple of `granularity` tokens, at most kMaxSearchedSeqLen) that fits with
// the knobs fixed; 0 if none.
int64_t max_seq_fixed(const PlanSpec& base, int64_t granularity);

// The step a plan's sequence lengths take: `granularity`, with a ring (cp > 1) its least common
// multiple with 2 x sp x cp (the zigzag split, check_context_parallel), and with sp when the
// trainer does not pad (trainer_rules.hpp sequence_padded).
int64_t sequence_unit(const PlanSpec& plan, int64_t granularity);

// Sequences per optimizer step: micro batch x accumulation x dp.
int64_t global_batch(const PlanSpec& plan);

// The plan with `knobs` and the attention kernel of their layout on its trainer.
PlanSpec with_knobs(const PlanSpec& base, const Knobs& knobs);

// Longest sequence over every candidate knob set, each a multiple of its sequence_unit (so of
// granularity); the plan that reaches it (seq_len set).
std::optional<RankedPlan> max_seq_searched(const PlanSpec& base, int64_t granularity,
                                           const KnobConstraints& constraints = {});

}  // namespace spplan::search
