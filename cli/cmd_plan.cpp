// spplan plan --model M --gpu G --gpus N --seq S [knobs to fix] [--top K] [--out FILE.toml]
//             [--lengths FILE [--packing P] [--epochs N]] [--simulate] [--show-rejected] [--json]
// With --lengths and no --seq the sequence length is searched beside the knobs.
// Exit 0 with a ranked list, 1 when no knob set fits (then why, per limit, with counts), 2 bad input.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/constraints.hpp"
#include "cli/corpus_flags.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/core/units.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/search.hpp"
#include "planner/search/seq_search.hpp"

#ifdef SPPLAN_HAVE_SIMULATOR
#include "simulator/simulate.hpp"
#endif

namespace spplan::cli {
namespace {

// With a corpus the last columns are its: real (non-padding) tokens/s and an epoch's time and price.
void print_table(const std::vector<search::RankedPlan>& plans, size_t top, bool corpus) {
  const size_t rows = std::min(top, plans.size());
  // The knobs column as wide as its longest entry (a ring, a grad-accum count), so the numbers align.
  int width = 58;
  for (size_t i = 0; i < rows; ++i) width = std::max(width, static_cast<int>(knobs_text(plans[i].plan.knobs).size()));
  std::printf("%-4s %-5s %-*s %6s %9s %6s %10s %12s %7s", "rank", "group", width, "knobs", "gbatch", "mem GiB", "free",
              "step s", corpus ? "real tok/s" : "tokens/s", "MFU");
  if (corpus) {
    std::printf(" %12s %10s\n", "epoch", "$/epoch");
  } else {
    std::printf(" %9s\n", "$/Mtok");
  }
  for (size_t i = 0; i < rows; ++i) {
    const auto& e = plans[i].estimate;
    std::printf("%-4zu %-5s %-*s %6lld %9.1f %5.1f%% %10.3f %12.0f %6.1f%%", i + 1, search::group_name(plans[i]), width,
                knobs_text(plans[i].plan.knobs).c_str(), static_cast<long long>(search::global_batch(plans[i].plan)),
                e.memory.needed_bytes() / kGiB, e.free_memory_pct(), e.time.step_time_s,
                corpus ? e.real_tokens_per_s : e.tokens_per_s, 100 * e.mfu);
    if (corpus) {
      std::printf(" %12s %10s\n", duration_text(e.epoch_s).c_str(), dollars_text(e.usd_per_epoch).c_str());
    } else {
      std::printf(" %9.3f\n", e.usd_per_million_tokens);
    }
  }
}

// The lengths a corpus's search tried, each with its first-ranked plan (plan --lengths, no --seq).
void print_seq_search(const search::SeqSearch& s, const corpus::Corpus& c) {
  int width = 58;  // as the plan table's knobs column
  for (const search::SeqChoice& ch : s.choices) {
    if (!ch.result.feasible.empty()) {
      width = std::max(width, static_cast<int>(knobs_text(ch.result.feasible.front().plan.knobs).size()));
    }
  }
  std::printf("%-9s %9s %10s %8s  %-*s %12s %10s\n", "seq", "whole", "sequences", "padding", width, "first-ranked knobs",
              "epoch", "$/epoch");
  for (size_t i = 0; i < s.choices.size(); ++i) {
    const search::SeqChoice& ch = s.choices[i];
    const double slots = static_cast<double>(ch.packed.pieces.sequences) * static_cast<double>(ch.seq_len);
    const std::string whole = format_number("%.1f%%", 100.0 * static_cast<double>(ch.documents_whole) /
                                                          static_cast<double>(c.documents()));
    const std::string padding = format_number("%.1f%%", slots > 0 ? 100.0 * ch.packed.padding_tokens / slots : 0.0);
    if (ch.result.feasible.empty()) {
      std::printf("%-9lld %9s %10lld %8s  %-*s\n", static_cast<long long>(ch.seq_len), whole.c_str(),
                  static_cast<long long>(ch.packed.pieces.sequences), padding.c_str(), width, "nothing fits");
      continue;
    }
    const auto& best = ch.result.feasible.front();
    std::printf("%-9lld %9s %10lld %8s  %-*s %12s %10s%s\n", static_cast<long long>(ch.seq_len), whole.c_str(),
                static_cast<long long>(ch.packed.pieces.sequences), padding.c_str(), width, knobs_text(best.plan.knobs).c_str(),
                duration_text(best.estimate.epoch_s).c_str(), dollars_text(best.estimate.usd_per_epoch).c_str(),
                static_cast<int>(i) == s.best ? "  <- chosen" : "");
  }
}

// What the gbatch column holds: the recipe's global batch on every plan, and what it left out; or,
// without --global-batch, each plan's own at the accumulation given.
std::string global_batch_text(const search::SearchResult& result, const search::KnobConstraints& c, const PlanSpec& base) {
  if (!c.global_batch) {
    return "gbatch: sequences per optimizer step, micro batch x accumulation (" + std::to_string(base.knobs.grad_accum_steps) +
           (base.knobs.grad_accum_steps == 1 ? ", the default" : "") +
           ") x dp, so it moves with the layout; --global-batch N keeps the recipe's on every plan";
  }
  int64_t left_out = 0;
  for (const auto& [reason, count] : result.excluded_by_trainer) {
    if (reason.rfind("--global-batch:", 0) == 0) left_out += count;
  }
  return "gbatch: " + std::to_string(*c.global_batch) + " sequences per optimizer step on every plan (--global-batch)" +
         (left_out > 0 ? "; " + std::to_string(left_out) + " knob sets left out: their layout's dp does not divide it"
                       : std::string());
}

// What the longest length tried, which keeps every document whole, costs beside the chosen one:
// "seq 191488 also keeps the 24 longest documents whole: +6 min 3 s, +$1.21 an epoch"; nothing when
// it is the chosen one or does not fit.
std::string longer_seq_text(const search::SeqSearch& s, const corpus::Corpus& c) {
  if (s.best < 0 || static_cast<size_t>(s.best) + 1 == s.choices.size()) return "";
  const search::SeqChoice &chosen = s.choices[static_cast<size_t>(s.best)], &longest = s.choices.back();
  if (longest.result.feasible.empty() || chosen.result.feasible.empty()) return "";
  const auto &a = chosen.result.feasible.front().estimate, &b = longest.result.feasible.front().estimate;
  const int64_t more = longest.documents_whole - chosen.documents_whole;
  const std::string sign = b.epoch_s >= a.epoch_s ? "+" : "-";
  return "seq " + std::to_string(longest.seq_len) + " also keeps the " + count_text(static_cast<double>(more)) +
         " longest of the " + count_text(static_cast<double>(c.documents())) + " documents whole: " + sign +
         duration_text(std::abs(b.epoch_s - a.epoch_s)) + ", " + sign + dollars_text(std::abs(b.usd_per_epoch - a.usd_per_epoch)) +
         " an epoch\n";
}

// Lengths are tried in multiples of 1024 tokens: every zigzag split of up to 512 ranks (2 chunks a
// rank) divides them, and FlashAttention's 128-token tiles.
constexpr int64_t kSearchedSeqMultiple = 1024;

// Each length tried, with its first-ranked plan's knobs, epoch and price; null when --seq was given.
nlohmann::json seq_search_json(const std::optional<search::SeqSearch>& seqs) {
  if (!seqs) return nullptr;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < seqs->choices.size(); ++i) {
    const search::SeqChoice& ch = seqs->choices[i];
    nlohmann::json row{{"seq", ch.seq_len}, {"sequences", ch.packed.pieces.sequences},
                       {"padding_tokens", ch.packed.padding_tokens}, {"tokens_cut", ch.packed.tokens_cut},
                       {"documents_whole", ch.documents_whole}, {"chosen", static_cast<int>(i) == seqs->best}};
    if (!ch.result.feasible.empty()) {
      const auto& best = ch.result.feasible.front();
      row["knobs"] = knobs_json(best.plan.knobs);
      row["epoch_s"] = best.estimate.epoch_s;
      row["usd_per_epoch"] = best.estimate.usd_per_epoch;
      row["real_tokens_per_s"] = best.estimate.real_tokens_per_s;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void print_rejections(const search::SearchResult& result) {
  for (const std::string& line : rejection_lines(result)) std::printf("  %s\n", line.c_str());
}

}  // namespace

std::vector<FlagSpec> plan_flag_specs() {
  std::vector<FlagSpec> cluster = cluster_flag_specs(true);
  for (FlagSpec& f : cluster) {
    if (f.name == "seq") f.default_value = "required, or searched with --lengths";
  }
  return with(with(with(with(cluster, corpus_flag_specs()), search::searched_knob_flag_specs()),
                   optimizer_flag_specs(fine_tuning_recipe())),
              {{"top", true, "how many ranked plans to list", "an integer 1..1000", "5"},
               {"out", true, "write the best plan as a plan file (what simulate, export and run read)",
                "a .toml path (not an input file)", "none written"},
               json_flag_spec(),
               {"simulate", false, "re-rank the leading plans (--top of them, at least 10, at most 50) by the simulator's step time"},
               {"show-rejected", false, "list, per limit, how many knob sets it rejected and the closest miss"}});
}

int cmd_plan(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, plan_flag_specs());
  if (!args.ok()) return fail(args.status());
  const auto corpus = corpus_options(*args);
  if (!corpus.ok()) return fail(corpus.status());
  // A corpus without --seq: the length is searched too (search/seq_search.hpp).
  const bool seq_searched = corpus->corpus && !args->get("seq");
  auto base = plan_from_flags(*args, !seq_searched);
  if (!base.ok()) return fail(base.status());
  std::optional<corpus::PackedCorpus> packed;
  if (!seq_searched) packed = apply_corpus(*corpus, &*base);
  const auto constraints = search::read_constraints(*args, &*base);
  if (!constraints.ok()) return fail(constraints.status());
  std::optional<search::SeqSearch> seqs;
  if (seq_searched) {
    seqs = search::search_seq_lengths(*base, *corpus->corpus, corpus->packing, *constraints, kSearchedSeqMultiple);
    // None fits at any length: the longest tried is searched below, for its rejections.
    base->seq_len = seqs->best >= 0 ? seqs->choices[static_cast<size_t>(seqs->best)].seq_len : seqs->choices.back().seq_len;
    packed = apply_corpus(*corpus, &*base);
  }
  int64_t top = 5;
  if (auto v = args->get("top")) {
    auto parsed = parse_int("--top", *v, 1, 1000);
    if (!parsed.ok()) return fail(parsed.status());
    top = *parsed;
  }
  if (auto out = args->get("out")) {
    // The files behind the names: `--gpu h100-80gb --out configs/gpus/h100-80gb.toml` is one file.
    const auto model = model_file(*args->get("model"));
    if (!model.ok()) return fail(model.status());
    const auto gpu = gpu_file(*args->get("gpu"));
    if (!gpu.ok()) return fail(gpu.status());
    std::vector<NamedPath> inputs{{"--model", *model, PathRole::kFile}};
    add_gpu_files(*gpu, "--gpu", &inputs);
    add_trainer_files(base->stack, "--trainer", &inputs);
    if (const Status s = check_not_an_input("--out", *out, inputs); !s) return fail(s);
  }
  search::SearchResult result = search::search_plans(*base, true, *constraints);
  if (result.evaluated == 0) return fail(search::no_candidate_status(result, *base));
  std::map<std::string, double> simulated_step_s;  // by knobs_text (unique within one search): --simulate's
#ifdef SPPLAN_HAVE_SIMULATOR
  if (args->has("simulate")) {
    // Re-rank the leading plans by simulated tokens/s (the schedule, not the overlap rules), with
    // the same noise band and preferences as the estimate's ranking.
    // Each is a simulation (about 50 ms for a 70B ring over 2^24 GPUs): at most 50, so that
    // --top 1000 --simulate answers in seconds; the plans after them keep the estimate's order.
    constexpr int64_t kMaxSimulatedPlans = 50;
    const size_t n = std::min<size_t>(result.feasible.size(), static_cast<size_t>(std::clamp<int64_t>(top, 10, kMaxSimulatedPlans)));
    std::vector<search::RankedPlan> leading(result.feasible.begin(), result.feasible.begin() + static_cast<long>(n));
    for (const auto& p : leading) simulated_step_s[knobs_text(p.plan.knobs)] = sim::simulated_step_time_s(p.plan);
    search::rank_plans_by(
        &leading,
        [&](const search::RankedPlan& p) { return p.estimate.tokens_per_step / simulated_step_s[knobs_text(p.plan.knobs)]; },
        constraints->ranking);
    std::copy(leading.begin(), leading.end(), result.feasible.begin());
  }
#else
  if (args->has("simulate")) return fail(Status::invalid("--simulate: the simulator is not built into this spplan"));
#endif
  if (auto out = args->get("out"); out && !result.feasible.empty()) {
    if (Status s = write_file_atomically(*out, plan_to_toml(result.feasible.front().plan)); !s) return fail(s);
  }
  if (args->has("json")) {
    nlohmann::json plans = nlohmann::json::array();
    for (size_t i = 0; i < std::min<size_t>(top, result.feasible.size()); ++i) {
      nlohmann::json plan = estimate_json(result.feasible[i].plan, result.feasible[i].estimate);
      if (auto it = simulated_step_s.find(knobs_text(result.feasible[i].plan.knobs)); it != simulated_step_s.end()) {
        plan["simulated_step_time_s"] = it->second;
      }
      plans.push_back(plan);
    }
    nlohmann::json j{{"plans", plans}, {"seq", base->seq_len}, {"seq_search", seq_search_json(seqs)},
                     {"evaluated", result.evaluated}, {"feasible", result.feasible.size()},
                     {"rejected", result.rejected.size()}, {"rejections", rejections_json(result)},
                     {"why", search::layout_reason(result)},
                     {"ranking", search::ranking_rule(constraints->ranking)},
                     {"safety", safety_json(result.feasible, constraints->ranking)}};
    print_json(std::move(j));
    return result.feasible.empty() ? kExitNoFit : kExitOk;
  }
  // The trainer prices and shapes every row: named, and said when it is the default nobody chose.
  const std::string trainer = "trainer " + base->stack.trainer +
                              (args->has("trainer") ? std::string() : " (the default; --trainer names yours)");
  std::printf("%s on %lldx %s at %lld tokens, %s: %zu of %lld knob sets fit\n", base->model.name.c_str(),
              static_cast<long long>(base->cluster.num_gpus), base->cluster.gpu.name.c_str(),
              static_cast<long long>(base->seq_len), trainer.c_str(), result.feasible.size(),
              static_cast<long long>(result.evaluated));
  if (packed) std::cout << corpus_text(*corpus, *base, *packed) << "\n";
  if (seqs) {
    std::cout << "sequence lengths tried (" << corpus::to_string(corpus->packing)
              << " packing; whole: the corpus's documents no longer than the sequence):\n";
    print_seq_search(*seqs, *corpus->corpus);
    std::cout << longer_seq_text(*seqs, *corpus->corpus);
  }
  if (result.feasible.empty()) {
    std::cout << "nothing fits; why:\n";
    print_rejections(result);
    // An older file of that name is still there: say so, or a script may read it as this plan.
    if (auto out = args->get("out")) std::cout << "nothing fits: " << *out << " not written\n";
    return kExitNoFit;
  }
  print_table(result.feasible, static_cast<size_t>(top), packed.has_value());
  std::cout << "ranked " << search::ranking_rule(constraints->ranking) << "\n";
  std::cout << safety_text(result.feasible, constraints->ranking);
  std::cout << global_batch_text(result, *constraints, *base) << "\n";
  std::cout << "why this layout: " << search::layout_reason(result) << "\n";
  if (args->has("show-rejected")) print_rejections(result);
  std::cout << "\nbest plan:\n" << estimate_text(result.feasible.front().plan, result.feasible.front().estimate);
  if (!simulated_step_s.empty()) {  // what --simulate ranked by: the simulator's schedule of the step
    const search::RankedPlan& best = result.feasible.front();
    const double step_s = simulated_step_s[knobs_text(best.plan.knobs)];
    std::cout << "  simulated step: " << format_number("%.3f s", step_s) << " ("
              << format_number("%.0f tokens/s", best.estimate.tokens_per_step / step_s) << "; the estimate above: "
              << format_number("%.3f s", best.estimate.time.step_time_s) << "); the leading "
              << simulated_step_s.size() << " plans are ranked by it\n";
  }
  if (packed && corpus->epochs > 1 && result.feasible.front().estimate.fits) {
    const auto& e = result.feasible.front().estimate;
    std::cout << "  " << corpus->epochs << " epochs: " << duration_text(e.epoch_s * static_cast<double>(corpus->epochs)) << ", "
              << dollars_text(e.usd_per_epoch * static_cast<double>(corpus->epochs)) << "\n";
  }
  if (auto out = args->get("out")) std::cout << "wrote " << *out << "\n";
  return kExitOk;
}

}  // namespace spplan::cli
