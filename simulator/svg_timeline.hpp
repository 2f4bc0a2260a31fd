// A picture of a simulated step: one row per resource with a box per op (colored by category:
// compute, a2a, zero, offload, optimizer, ring), a time axis, and the device-memory curve below on a
// GiB scale with the device's capacity and its peak marked, named in words (op_words.hpp). Boxes
// narrower than a pixel that touch are merged, so an 80-layer step stays a small file. Plain SVG
// 1.1: opens in any browser.
#pragma once

#include <string>

#include "planner/core/status.hpp"
#include "simulator/simulate.hpp"

namespace spplan::sim {

// `capacity_bytes`: the device's memory (0: not drawn).
std::string timeline_svg(const SimResult& result, const std::string& title, double capacity_bytes, int width_px = 1200);

// Writes timeline_svg() to `path`.
Status write_timeline_svg(const SimResult& result, const std::string& title, double capacity_bytes,
                          const std::string& path);

}  // namespace spplan::sim
