#include "planner/search/rent.hpp"

#include "planner/config/loaders.hpp"

namespace spplan::search {

RentTable rent_options(const PlanSpec& base, const KnobConstraints& constraints) {
  RentTable table;
  for (const std::string& name : gpu_presets()) {
    const Result<GpuSpec> gpu = load_gpu(name);
    if (!gpu.ok()) continue;
    for (const int64_t nodes : kRentNodeShapes) {
      PlanSpec plan = base;
      plan.cluster.gpu = *gpu;
      plan.cluster.num_gpus = nodes * gpu->gpus_per_node;
      RentOption option{name, nodes, plan.cluster.num_gpus, std::nullopt, 0};
      SearchResult result = search_plans(plan, false, constraints);
      if (!result.feasible.empty()) option.best = std::move(result.feasible.front());
      if (auto longest = max_seq_searched(plan, kRentMaxSeqGranularity, constraints)) option.max_seq = longest->plan.seq_len;
      table.options.push_back(std::move(option));
    }
  }
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
  return table;
}

}  // namespace spplan::search
