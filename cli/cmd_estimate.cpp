// spplan estimate --model M --gpu G --gpus N --seq S --sp P [knobs] [--lengths FILE [--packing P]] [--json]
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/corpus_flags.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::cli {

std::vector<FlagSpec> estimate_flag_specs() {
  return with(with(with(with(cluster_flag_specs(true), knob_flag_specs()), corpus_flag_specs()),
                   optimizer_flag_specs(fine_tuning_recipe())),
              {json_flag_spec()});
}

int cmd_estimate(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, estimate_flag_specs());
  if (!args.ok()) return fail(args.status());
  auto plan = plan_from_flags(*args, true);
  if (!plan.ok()) return fail(plan.status());
  if (!args->has("sp")) return fail(Status::invalid("--sp: missing (required: the Ulysses degree, e.g. --sp 4)"));
  if (Status s = apply_knob_flags(*args, &plan->knobs); !s) return fail(s);
  const auto corpus = corpus_options(*args);
  if (!corpus.ok()) return fail(corpus.status());
  apply_corpus(*corpus, &*plan);
  // Unnamed, the ring variant is the trainer's (axolotl's ring is an all-gather), as the search's.
  if (!args->has("cp-comm")) plan->knobs.cp_comm = searched_cp_comm(*plan);
  // The kernel first: the trainer's rules read it (a ring on hf runs SDPA only).
  if (Status s = settle_attention(&*plan, args->has("attention"), flag_where); !s) return fail(s);
  if (Status s = check_plan(*plan, flag_where); !s) return fail(s);
  const costmodel::Estimate e = costmodel::estimate(*plan);
  if (args->has("json")) {
    print_json(estimate_json(*plan, e));
  } else {
    std::cout << estimate_text(*plan, e);
  }
  return kExitOk;
}

}  // namespace spplan::cli
