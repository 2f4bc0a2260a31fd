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

}  // namespace spplan::cli
