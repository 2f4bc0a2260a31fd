#include "planner/search/rent.hpp"

#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::search {

namespace {

// One row: the best plan at the sequence and the longest sequence, on `plan`'s GPU and count.
RentOption option_for(const PlanSpec& plan, const std::string& name, const KnobConstraints& constraints) {
  RentOption option{name, plan.cluster.gpu.measured_as(), plan.cluster.num_nodes(), plan.cluster.num_gpus, std::nullopt, 0};
  SearchResult result = search_plans(plan, false, constraints);
  if (!result.feasible.empty()) option.best = std::move(result.feasible.front());
  if (auto longest = max_seq_searched(plan, kRentMaxSeqGranularity, constraints)) option.max_seq = longest->plan.seq_len;
  return option;
}

void mark_cheapest_and_fastest(RentTable* t);

}  // namespace

RentTable rent_options_with_own(const PlanSpec& base, const KnobConstraints& constraints, const RentShapes& shapes) {
  RentTable table = rent_options(base, constraints, shapes);
  for (RentOption& o : table.options) {
    if (o.gpu == base.cluster.gpu.name && o.gpus == base.cluster.num_gpus) {
      o.own = true;
      return table;
    }
  }
  RentOption own = option_for(base, base.cluster.gpu.name, constraints);
  own.own = true;
  table.options.push_back(std::move(own));
  mark_cheapest_and_fastest(&table);
  return table;
}

RentTable rent_options(const PlanSpec& base, const KnobConstraints& constraints, const RentShapes& shapes) {
  RentTable table;
  for (const std::string& name : gpu_presets()) {
    Result<GpuSpec> gpu = load_gpu(name);
    if (!gpu.ok()) continue;
    if (const auto price = shapes.price_per_gpu_hour.find(name); price != shapes.price_per_gpu_hour.end()) {
      gpu->price_per_gpu_hour = price->second;
    }
    for (const int64_t nodes : shapes.nodes) {
      PlanSpec plan = base;
      plan.cluster.gpu = *gpu;
      plan.cluster.num_gpus = nodes * gpu->gpus_per_node;
      // Each preset ranked against its own measured error; without a table the base's error holds
      // for its own GPU only.
      if (shapes.accuracy != nullptr || gpu->name != base.cluster.gpu.name) hold_against_measured(&plan, shapes.accuracy);
      RentOption option = option_for(plan, name, constraints);
      option.nodes = nodes;
      table.options.push_back(std::move(option));
    }
  }
  mark_cheapest_and_fastest(&table);
  return table;
}

namespace {

void mark_cheapest_and_fastest(RentTable* t) {
  RentTable& table = *t;
  table.cheapest = table.fastest = -1;
  for (int i = 0; i < static_cast<int>(table.options.size()); ++i) {
    const auto& best = table.options[static_cast<size_t>(i)].best;
    if (!best) continue;
    const auto& e = best->estimate;
    if (table.cheapest < 0 ||
        e.usd_per_million_tokens < table.options[static_cast<size_t>(table.cheapest)].best->estimate.usd_per_million_tokens) {
      table.cheapest = i;
    }
    if (table.fastest < 0 || e.tokens_per_s > table.options[static_cast<size_t>(table.fastest)].best->estimate.tokens_per_s) {
      table.fastest = i;
    }
  }
}

}  // namespace

}  // namespace spplan::search
