#include "simulator/svg_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "simulator/op_words.hpp"

namespace spplan::sim {
namespace {

constexpr double kLeftPx = 150, kRightPx = 45, kTopPx = 40, kRowPx = 26, kMemoryPx = 140;
const char* const kColors[kNumOpCategories] = {"#4e79a7", "#e15759", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f"};

std::string num(double value, int digits = 1) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// `text` as SVG character data: a model named from a config.json folder may hold '<' or '&'.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// 1/2/5 x 10^k, about `target` steps over `span` (> 0).
double tick_step(double span, int target) {
  const double raw = span / target;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * decade) return m * decade;
  }
  return 10 * decade;
}

struct Frame {  // maps seconds to x pixels
  double width_px, step_s;
  double x(double t_s) const { return kLeftPx + (width_px - kLeftPx - kRightPx) * (step_s > 0 ? t_s / step_s : 0); }
};

// One row: boxes of the same category closer than half a pixel are drawn as one.
void draw_row(const SimResult& r, Resource resource, const Frame& f, std::ostringstream& svg) {
  const double y = kTopPx + static_cast<int>(resource) * kRowPx;
  svg << "<text x='8' y='" << num(y + 17) << "' font-size='12'>" << resource_name(resource) << "</text>\n";
  double x0 = -1, x1 = -1;
  int category = -1;
  const auto flush = [&] {
    if (category < 0) return;
    svg << "<rect x='" << num(x0, 2) << "' y='" << num(y + 3) << "' width='" << num(std::max(0.5, x1 - x0), 2)
        << "' height='" << num(kRowPx - 6) << "' fill='" << kColors[category] << "'/>\n";
  };
  for (const SimEvent& e : r.events) {
    if (e.resource != resource) continue;
    const double a = f.x(e.start_s), b = f.x(e.end_s);
    if (static_cast<int>(e.category) == category && a - x1 < 0.5) {
      x1 = std::max(x1, b);
      continue;
    }
    flush();
    x0 = a, x1 = b, category = static_cast<int>(e.category);
  }
  flush();
}

void draw_axis(const Frame& f, double y, std::ostringstream& svg) {
  for (int k = 0; k <= 5; ++k) {
    const double t_s = f.step_s * k / 5.0;
    svg << "<line x1='" << num(f.x(t_s)) << "' y1='" << num(kTopPx) << "' x2='" << num(f.x(t_s)) << "' y2='"
        << num(y) << "' stroke='#ccc'/>\n<text x='" << num(f.x(t_s) - 10) << "' y='" << num(y + 14)
        << "' font-size='11'>" << num(t_s, 2) << " s</text>\n";
  }
}

// The memory curve as a step function on a GiB scale reaching 5% above the larger of the peak and
// the device's capacity (dashed red, when known), the peak marked and named in words.
void draw_memory(const SimResult& r, const Frame& f, double top, double capacity_bytes, std::ostringstream& svg) {
  const double bottom = top + kMemoryPx, scale = std::max(1.0, 1.05 * std::max(r.peak_memory_bytes, capacity_bytes));
  const auto y = [&](double bytes) { return bottom - kMemoryPx * bytes / scale; };
  svg << "<text x='8' y='" << num(top + 12) << "' font-size='12'>memory (GiB)</text>\n";
  const double tick = tick_step(gib(scale), 4);
  for (double g = 0; g * kGiB <= scale; g += tick) {
    svg << "<line x1='" << num(kLeftPx - 4) << "' y1='" << num(y(g * kGiB)) << "' x2='" << num(f.x(f.step_s))
        << "' y2='" << num(y(g * kGiB)) << "' stroke='#eee'/>\n<text x='" << num(kLeftPx - 8) << "' y='"
        << num(y(g * kGiB) + 4) << "' font-size='11' text-anchor='end'>" << format_number(g) << "</text>\n";
  }
  if (capacity_bytes > 0) {
    svg << "<line x1='" << num(kLeftPx) << "' y1='" << num(y(capacity_bytes)) << "' x2='" << num(f.x(f.step_s))
        << "' y2='" << num(y(capacity_bytes)) << "' stroke='#c01010' stroke-dasharray='6,4'/>\n<text x='"
        << num(f.x(f.step_s)) << "' y='" << num(y(capacity_bytes) - 4) << "' font-size='11' text-anchor='end' "
        << "fill='#c01010'>capacity " << num(gib(capacity_bytes)) << " GiB</text>\n";
  }
  svg << "<polyline fill='none' stroke='#333' stroke-width='1' points='";
  double last_bytes = r.memory.empty() ? 0 : r.memory.front().bytes;
  for (const MemorySample& s : r.memory) {
    svg << num(f.x(s.time_s), 2) << ',' << num(y(last_bytes), 2) << ' ' << num(f.x(s.time_s), 2) << ','
        << num(y(s.bytes), 2) << ' ';
    last_bytes = s.bytes;
  }
  svg << "'/>\n<circle cx='" << num(f.x(r.peak_time_s)) << "' cy='" << num(y(r.peak_memory_bytes))
      << "' r='4' fill='#e15759'/>\n<text x='" << num(f.x(r.peak_time_s) + 6) << "' y='"
      << num(y(r.peak_memory_bytes) + 4) << "' font-size='11'>peak " << num(gib(r.peak_memory_bytes)) << " GiB: "
      << escaped(r.peak_op.empty() ? "the persistent state" : op_in_words(r.peak_op)) << "</text>\n";
}

void draw_legend(double y, std::ostringstream& svg) {
  for (int c = 0; c < kNumOpCategories; ++c) {
    const double x = kLeftPx + 110.0 * c;
    svg << "<rect x='" << num(x) << "' y='" << num(y) << "' width='12' height='12' fill='" << kColors[c]
        << "'/><text x='" << num(x + 16) << "' y='" << num(y + 11) << "' font-size='12'>"
        << category_name(static_cast<OpCategory>(c)) << "</text>\n";
  }
}

}  // namespace

std::string timeline_svg(const SimResult& r, const std::string& title, double capacity_bytes, int width_px) {
  // The span drawn is the micro steps simulated: folded ones are said under the title, not drawn.
  const Frame f{static_cast<double>(width_px), r.shown_time_s > 0 ? r.shown_time_s : r.step_time_s};
  const double rows_bottom = kTopPx + kNumResources * kRowPx;
  const double memory_top = rows_bottom + 30, height = memory_top + kMemoryPx + 50;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width_px << "' height='" << num(height, 0)
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n<text x='8' y='22' "
      << "font-size='14'>" << escaped(title) << " (step " << num(r.step_time_s, 3) << " s, serial "
      << num(r.serial_step_time_s, 3) << " s)</text>\n";
  if (r.folded.count > 0) svg << "<text x='8' y='36' font-size='11'>" << escaped(folded_text(r.folded)) << "</text>\n";
  draw_axis(f, rows_bottom, svg);
  for (int res = 0; res < kNumResources; ++res) draw_row(r, static_cast<Resource>(res), f, svg);
  draw_memory(r, f, memory_top, capacity_bytes, svg);
  draw_legend(memory_top + kMemoryPx + 25, svg);
  svg << "</svg>\n";
  return svg.str();
}

Status write_timeline_svg(const SimResult& result, const std::string& title, double capacity_bytes,
                          const std::string& path) {
  return write_file_atomically(path, timeline_svg(result, title, capacity_bytes));
}

}  // namespace spplan::sim
