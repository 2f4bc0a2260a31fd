#include "planner/search/rent.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

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

void mark_cheapest_and_fastest(RentTable* t, Ranking ranking);

// option_for of every plan, on this machine's cores: each option is a search and a longest-sequence
// search of its own, written to its own slot, so the table is the same on any core count (the
// costmodel reads only its inputs; the trainer records' cache is locked). A GUI re-plan with What
// to rent in front took 287 ms pricing them one after another, too slow to follow typing.
std::vector<RentOption> price_options(const std::vector<PlanSpec>& plans, const std::vector<std::string>& names,
                                      const KnobConstraints& constraints) {
  std::vector<RentOption> options(plans.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < plans.size(); i = next++) options[i] = option_for(plans[i], names[i], constraints);
  };
  const size_t threads = std::min<size_t>(plans.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // this thread too
  for (std::thread& t : pool) t.join();
  return options;
}

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
  mark_cheapest_and_fastest(&table, constraints.ranking);
  return table;
}

RentTable rent_options(const PlanSpec& base, const KnobConstraints& constraints, const RentShapes& shapes) {
  std::vector<PlanSpec> plans;  // one per preset and node shape, in table order
  std::vector<std::string> names;
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
      plans.push_back(std::move(plan));
      names.push_back(name);
    }
  }
  RentTable table;
  table.options = price_options(plans, names, constraints);
  mark_cheapest_and_fastest(&table, constraints.ranking);
  return table;
}

namespace {

// Under kSafeFirst a safe option beats every risky one for either mark, as plan ranks its rows.
void mark_cheapest_and_fastest(RentTable* t, Ranking ranking) {
  RentTable& table = *t;
  table.cheapest = table.fastest = -1;
  const auto safer = [&](const RankedPlan& a, const RankedPlan& b) {
    return ranking == Ranking::kSafeFirst ? static_cast<int>(is_safe(a)) - static_cast<int>(is_safe(b)) : 0;
  };
  for (int i = 0; i < static_cast<int>(table.options.size()); ++i) {
    const auto& best = table.options[static_cast<size_t>(i)].best;
    if (!best) continue;
    const auto& e = best->estimate;
    if (table.cheapest < 0) {
      table.cheapest = table.fastest = i;
      continue;
    }
    const RankedPlan& cheapest = *table.options[static_cast<size_t>(table.cheapest)].best;
    const RankedPlan& fastest = *table.options[static_cast<size_t>(table.fastest)].best;
    const int vs_cheapest = safer(*best, cheapest), vs_fastest = safer(*best, fastest);
    if (vs_cheapest > 0 || (vs_cheapest == 0 && e.usd_per_million_tokens < cheapest.estimate.usd_per_million_tokens)) {
      table.cheapest = i;
    }
    if (vs_fastest > 0 || (vs_fastest == 0 && e.tokens_per_s > fastest.estimate.tokens_per_s)) table.fastest = i;
  }
}

}  // namespace

}  // namespace spplan::search
