#include "cli/constraints.hpp"

#include <algorithm>
#include <map>

#include "cli/report.hpp"

namespace spplan::cli {

namespace {

struct LimitSummary {
  int64_t count = 0;
  const search::Rejected* closest = nullptr;
};

std::map<std::string, LimitSummary> by_limit(const search::SearchResult& result) {
  std::map<std::string, LimitSummary> out;
  for (const auto& r : result.rejected) {
    LimitSummary& s = out[search::limit_name(r.limit)];
    ++s.count;
    if (s.closest == nullptr || r.need_over_have < s.closest->need_over_have) s.closest = &r;
  }
  return out;
}

}  // namespace

std::vector<std::string> rejection_lines(const search::SearchResult& result) {
  std::vector<std::string> lines;
  for (const auto& [limit, s] : by_limit(result)) {
    lines.push_back(limit + ": " + std::to_string(s.count) + " knob sets do not fit (closest: " +
                    knobs_text(s.closest->knobs) + ", " + s.closest->reason + ")");
  }
  for (const auto& [rule, count] : result.excluded_by_trainer) {
    lines.push_back("trainer rule: " + std::to_string(count) + " knob sets left out: " + rule);
  }
  return lines;
}

nlohmann::json rejections_json(const search::SearchResult& result) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [limit, s] : by_limit(result)) {
    out.push_back({{"limit", limit}, {"count", s.count}, {"closest_knobs", knobs_json(s.closest->knobs)},
                   {"closest_reason", s.closest->reason}});
  }
  for (const auto& [rule, count] : result.excluded_by_trainer) {
    out.push_back({{"limit", "trainer rule"}, {"count", count}, {"rule", rule}});
  }
  return out;
}

}  // namespace spplan::cli
