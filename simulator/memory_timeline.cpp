#include "simulator/memory_timeline.hpp"

namespace spplan::sim {
namespace {

void apply(const std::vector<MemDelta>& deltas, MemBytes* alive) {
  for (const MemDelta& delta : deltas) (*alive)[static_cast<int>(delta.category)] += delta.bytes;
}

// What the step needs of the device: allocator slack on what the allocator hands out beyond the
// states, counted as overhead, less what it gives back near the limit (memory_phases.cpp:
// add_fragmentation(), MemoryBreakdown::needed_bytes): the trace is drawn against the capacity.
MemBytes with_fragmentation(MemBytes alive, const costmodel::AllocatorSlack& slack) {
  const int overhead = static_cast<int>(MemCategory::kOverhead);
  alive[overhead] += slack.needed(total_bytes(alive) - alive[overhead]);
  return alive;
}

void note_peak(const MemBytes& alive, double time_s, OpId op, MemoryTimeline* timeline) {
  const double bytes = total_bytes(alive);
  if (bytes <= timeline->peak_bytes) return;  // the first time a peak is reached is the one reported
  timeline->peak_bytes = bytes;
  timeline->peak_time_s = time_s;
  timeline->peak_op = op;
  timeline->peak_alive = alive;
}

}  // namespace

MemoryTimeline memory_timeline(const OpGraph& graph, const Schedule& schedule) {
  MemoryTimeline timeline;
  MemBytes alive = graph.initial_bytes;
  const auto reported = [&] { return with_fragmentation(alive, graph.slack); };
  timeline.peak_bytes = -1;
  note_peak(reported(), 0.0, kNoOp, &timeline);
  timeline.samples.push_back({0.0, timeline.peak_bytes});
  const auto& log = schedule.log;
  for (size_t k = 0; k < log.size(); ++k) {
    const Op& op = graph.op(log[k].op);
    apply(log[k].is_end ? op.at_end : op.at_start, &alive);
    const MemBytes now = reported();
    note_peak(now, log[k].time_s, log[k].op, &timeline);
    const bool last_at_this_time = k + 1 == log.size() || log[k + 1].time_s != log[k].time_s;
    if (!last_at_this_time) continue;
    if (timeline.samples.back().time_s == log[k].time_s) timeline.samples.pop_back();
    timeline.samples.push_back({log[k].time_s, total_bytes(now)});
  }
  return timeline;
}

}  // namespace spplan::sim
