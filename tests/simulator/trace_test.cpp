// The Chrome trace is valid JSON with one named track per resource; the SVG has a row per resource.
#include "simulator/trace_json.hpp"

#include <cstdio>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/core/units.hpp"
#include "simulator/op_words.hpp"
#include "simulator/svg_timeline.hpp"
#include "tests/simulator/plan_fixtures.hpp"

namespace spplan::sim {
namespace {

SimResult offload_plan_result() {
  PlanSpec p = testing::make_plan(testing::llama_8b(), 8, 256 * 1024, 8);
  p.knobs.act_ckpt = ActCkpt::kOffload;
  p.knobs.offload_optimizer = OffloadDevice::kCpu;
  p.knobs.tiled_mlp = p.knobs.tiled_loss = true;
  return simulate_plan(p, Mode::kOverlap);  // uses all five resources
}

TEST(ChromeTrace, OneNamedTrackPerResource) {
  const SimResult r = offload_plan_result();
  const auto trace = nlohmann::json::parse(chrome_trace_json(r));  // throws if invalid
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<int> named_tids, used_tids;
  size_t complete = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name") named_tids.insert(e.at("tid").get<int>());
    if (ph == "X") {
      ++complete;
      used_tids.insert(e.at("tid").get<int>());
      EXPECT_GE(e.at("dur").get<double>(), 0);
      EXPECT_GE(e.at("ts").get<double>(), 0);
    }
    if (ph == "C") ++counters;
  }
  EXPECT_EQ(named_tids, (std::set<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(used_tids, named_tids);  // every resource has work in this plan
  EXPECT_EQ(complete, r.events.size());
  EXPECT_EQ(counters, r.memory.size());
}

// The last complete event ends at the step time, in microseconds.
TEST(ChromeTrace, TimesAreMicroseconds) {
  const SimResult r = offload_plan_result();
  const auto trace = nlohmann::json::parse(chrome_trace_json(r));
  double last_end_us = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.at("ph") == "X") last_end_us = std::max(last_end_us, e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  EXPECT_NEAR(last_end_us, r.step_time_s * 1e6, 1e-6 * r.step_time_s * 1e6);
}

TEST(TimelineSvg, RowPerResourceAndMemoryCurve) {
  const std::string svg = timeline_svg(offload_plan_result(), "test", 0);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  for (const char* row : {">compute<", ">comm<", ">h2d<", ">d2h<", ">host<"}) {
    EXPECT_NE(svg.find(row), std::string::npos) << row;
  }
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("peak "), std::string::npos);
  EXPECT_LT(svg.size(), 400000u);  // tiny boxes are merged
}

// The memory panel has a GiB scale and the capacity line, the peak is named in
// words (not "gather.m0.bwd.L30"), and a title is character data however the model is named.
TEST(TimelineSvg, MemoryPanelHasAScaleTheCapacityAndThePeakInWords) {
  const SimResult r = offload_plan_result();
  const double capacity = 2.0 * r.peak_memory_bytes;
  const std::string svg = timeline_svg(r, "a<b & 'c'", capacity);
  EXPECT_NE(svg.find("a&lt;b &amp; &apos;c&apos;"), std::string::npos);
  char label[64];
  std::snprintf(label, sizeof label, ">capacity %.1f GiB<", capacity / kGiB);
  EXPECT_NE(svg.find(label), std::string::npos) << label;
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find("text-anchor='end'>0</text>"), std::string::npos);  // the scale starts at 0 GiB
  ASSERT_FALSE(r.peak_op.empty());
  EXPECT_NE(svg.find("GiB: " + op_in_words(r.peak_op) + "</text>"), std::string::npos);
  EXPECT_EQ(svg.find("(" + r.peak_op + ")"), std::string::npos);
  EXPECT_EQ(timeline_svg(r, "x", 0).find(">capacity "), std::string::npos);  // unknown: not drawn
}

}  // namespace
}  // namespace spplan::sim
