// Presentation of estimates: the DESIGN.md JSON schema and the human tables.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/knobs_json.hpp"
#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::cli {

using spplan::knobs_json;  // planner/config/knobs_json.hpp: the engine reports the same object
// The `estimate --json` object: fits, memory {...}, host_memory_gib_per_node, step_time_s, ...
nlohmann::json estimate_json(const PlanSpec& plan, const costmodel::Estimate& estimate);
// max-seq's and fit's "band": the scope, its signed memory error, the published longest runs, the
// words, and the headroom (share of the device) the band's edge books.
nlohmann::json band_json(const MemoryBand& band, double edge_headroom);
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
