#include "engine/run/step_stats.hpp"

#include <map>
#include <string>

namespace spplan::engine {
namespace {

void add_phases(const PhaseTimes& p, std::map<std::string, double>* sum) {
  (*sum)["data_s"] += p.data_s;
  (*sum)["forward_s"] += p.forward_s;
  (*sum)["loss_s"] += p.loss_s;
  (*sum)["backward_s"] += p.backward_s;
  (*sum)["grad_all_reduce_s"] += p.grad_all_reduce_s;
  (*sum)["optimizer_s"] += p.optimizer_s;
  (*sum)["all_to_all_s"] += p.all_to_all_s;
  (*sum)["grad_reduce_scatter_s"] += p.grad_reduce_scatter_s;
  (*sum)["ring_s"] += p.ring_s;
}

}  // namespace

void summarize(const std::vector<StepStats>& steps, RunReport* r) {
  const size_t first = steps.size() > 1 ? 1 : 0;
  double time_s = 0, tokens = 0;
  std::map<std::string, double> sum;
  for (size_t i = first; i < steps.size(); ++i) {
    time_s += steps[i].step_time_s;
    tokens += static_cast<double>(steps[i].tokens);
    add_phases(steps[i].phases, &sum);
  }
  const auto n = static_cast<double>(steps.size() - first);
  r->tokens_per_s = tokens / time_s;
  r->step_time_s = time_s / n;
  for (auto& [name, s] : sum) r->phases_s[name] = s / n;
}

}  // namespace spplan::engine
