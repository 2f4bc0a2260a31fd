// Presentation of estimates: the DESIGN.md JSON schema and the human tables.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/knobs_json.hpp"
#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/search/search.hpp"

namespace spplan::cli {

using spplan::knobs_json;  // planner/config/knobs_json.hpp: the engine reports the same object
// The `estimate --json` object: fits, memory {...}, host_memory_gib_per_node, step_time_s, ...
nlohmann::json estimate_json(const PlanSpec& plan, const costmodel::Estimate& estimate);
// max-seq's and fit's "band": the scope, its signed memory error, the published longest runs, the
// words, and the headroom (share of the device) the band's edge books.
nlohmann::json band_json(const MemoryBand& band, double edge_headroom);
// The lines under a ranked table (`ranked` in rank_plans order, all of one model, GPU and trainer):
// what makes a plan safe there and whether it was measured, how many plans are in each group, and
// the fastest risky plan beside row 1 with its speed gain and its margin; with kSpeedOnly, where row
// 1 may be risky, the best safe plan beside it instead.
std::string safety_text(const std::vector<search::RankedPlan>& ranked, search::Ranking ranking);
// The same as JSON: {"ranking": "safe_first" | "speed_only", "margin_pct", "measured", "measured_runs",
// "measured_on", "safe", "risky", "words", "fastest_risky": {"rank", "knobs", "speed_gain_pct",
// "margin_pct", "held_against_pct"} or null, "best_safe" (--risky with a risky row 1: {"rank", "knobs",
// "speed_loss_pct", "margin_pct"}) or null}.
nlohmann::json safety_json(const std::vector<search::RankedPlan>& ranked, search::Ranking ranking);
// A readable multi-line report of one estimate.
std::string estimate_text(const PlanSpec& plan, const costmodel::Estimate& estimate);
// "sp=4 zero=3 opt=cpu params=none ckpt=full tiled=mlp,loss mb=1"
std::string knobs_text(const Knobs& knobs);
// "$7.25", "$1,438": cents while they matter.
std::string dollars_text(double usd);

// `j` as every --json command prints it: indented by 2. Each string and key, at any depth, is made
// UTF-8 first (utf8_text: a byte that is not is written \xNN, as messages show it), where dump()
// threw type_error 316 on a model named after a Latin-1 folder or a CSV cell in Latin-1.
std::string json_text(nlohmann::json j);
// json_text(j) and a newline on std::cout.
void print_json(nlohmann::json j);

}  // namespace spplan::cli
