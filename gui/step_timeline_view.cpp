#include "gui/step_timeline_view.hpp"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>

#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "simulator/op_words.hpp"
#include "simulator/trace_json.hpp"

namespace spplan::gui {
namespace {

constexpr double kMinLeftMarginPx = 74;  // lane names (leftMargin: the widest, unclipped)
constexpr double kRightMarginPx = 12;
constexpr double kLineHeightPx = 18;
constexpr double kTopMarginPx = 2 * kLineHeightPx + 4;  // the exposed-communication line, the legend
constexpr double kAxisHeightPx = 20;
constexpr double kLaneGapPx = 3;
constexpr double kMinSpanS = 1e-7;     // deeper zoom shows nothing new

QColor categoryColor(sim::OpCategory category) {
  switch (category) {
    case sim::OpCategory::kCompute: return QColor(0x4c, 0x78, 0xa8);
    case sim::OpCategory::kA2a: return QColor(0xe4, 0x57, 0x56);
    case sim::OpCategory::kZero: return QColor(0xf5, 0x85, 0x18);
    case sim::OpCategory::kOffload: return QColor(0x72, 0xb7, 0xb2);
    case sim::OpCategory::kOptimizer: return QColor(0x54, 0xa2, 0x4b);
    case sim::OpCategory::kRing: return QColor(0x9c, 0x75, 0x5f);
  }
  return Qt::gray;
}

// 1/2/5 x 10^k seconds, about `target` ticks over `span`.
double tickStep(double span, int target) {
  const double raw = span / target;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * decade) return m * decade;
  }
  return 10 * decade;
}

}  // namespace

StepTimelineView::StepTimelineView(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);  // keyboard zoom
  // Its lanes at their smallest: the tabs give way to the plan table's ten rows at 1280 x 800.
  setMinimumHeight(150);
  setAccessibleName(tr("Step timeline"));
}

StepTimelineView::Lane StepTimelineView::laneOf(const sim::SimEvent& e) {
  if (e.resource == sim::Resource::kHost) return HostLane;
  switch (e.category) {
    case sim::OpCategory::kA2a: return A2aLane;
    case sim::OpCategory::kRing: return A2aLane;  // the sequence-parallel traffic, Ulysses and ring
    case sim::OpCategory::kZero: return ZeroLane;
    case sim::OpCategory::kOffload: return OffloadLane;
    default: return ComputeLane;  // compute and the optimizer step on the GPU
  }
}

const char* StepTimelineView::laneName(Lane lane) {
  static const char* const kNames[LaneCount] = {"compute", "all-to-all / ring", "ZeRO", "offload", "host"};
  return kNames[lane];
}

void StepTimelineView::setPlan(const PlanSpec& plan, double capacityBytes) {
  m_result = std::make_unique<sim::SimResult>(sim::simulate_plan(plan, sim::Mode::kOverlap));
  m_phases = sim::phase_starts(m_result->events);  // once: the paints reuse them
  m_capacityBytes = capacityBytes;
  resetZoom();
}

void StepTimelineView::clear() {
  m_result.reset();
  m_phases.clear();
  update();
  Q_EMIT changed();
}

QString StepTimelineView::exposedText() const {
  if (!m_result) return {};
  const sim::ExposedComm& x = m_result->exposed_comm_s;
  // Durations as people read them ("8 h 54 min", "16.087 s", not "28149.939 s"), as the plan table.
  // A long accumulation is drawn as its first, one steady and its last micro step: said after the rest.
  const QString folded = m_result->folded.count > 0
                             ? QString::fromStdString(" · " + sim::folded_text(m_result->folded))
                             : QString();
  return tr("step %1 simulated (%2 without overlap) · exposed communication: all-to-all %3 s, ZeRO %4 s, "
            "offload %5 s · peak %6 GiB during %7")
      .arg(QString::fromStdString(duration_text(m_result->step_time_s)))
      .arg(QString::fromStdString(duration_text(m_result->serial_step_time_s)))
      .arg(x.a2a_s, 0, 'f', 3)
      .arg(x.zero_s, 0, 'f', 3)
      .arg(x.offload_s, 0, 'f', 3)
      .arg(gib(m_result->peak_memory_bytes), 0, 'f', 1)
      .arg(peakWhere()) + folded;
}

QString StepTimelineView::peakWhere() const {
  if (!m_result || m_result->peak_op.empty()) return tr("the persistent state");
  return QString::fromStdString(sim::op_in_words(m_result->peak_op));
}

void StepTimelineView::zoomBy(double factor, double centerFraction) {
  if (!m_result || factor <= 0) return;
  const double center = m_viewStartS + centerFraction * m_viewSpanS;
  const double full = std::max(m_result->shown_time_s, kMinSpanS);
  m_viewSpanS = std::clamp(m_viewSpanS / factor, kMinSpanS, full);
  m_viewStartS = std::clamp(center - centerFraction * m_viewSpanS, 0.0, full - m_viewSpanS);
  update();
  Q_EMIT changed();
}

void StepTimelineView::panBy(double fractionOfSpan) {
  if (!m_result) return;
  const double full = std::max(m_result->shown_time_s, kMinSpanS);
  m_viewStartS = std::clamp(m_viewStartS + fractionOfSpan * m_viewSpanS, 0.0, full - m_viewSpanS);
  update();
  Q_EMIT changed();
}

void StepTimelineView::resetZoom() {
  m_viewStartS = 0;
  m_viewSpanS = m_result ? std::max(m_result->shown_time_s, kMinSpanS) : 1;
  update();
  Q_EMIT changed();
}

void StepTimelineView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  const QRectF area = plotRect();
  if (event->modifiers() & Qt::ControlModifier) {
    const double fraction = std::clamp((event->position().x() - area.left()) / area.width(), 0.0, 1.0);
    zoomBy(std::pow(1.25, steps), fraction);
  } else {
    panBy(-0.1 * steps);
  }
  event->accept();
}

void StepTimelineView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Plus: case Qt::Key_Equal: zoomBy(2); break;
    case Qt::Key_Minus: zoomBy(0.5); break;
    case Qt::Key_0: resetZoom(); break;
    case Qt::Key_Left: panBy(-0.25); break;
    case Qt::Key_Right: panBy(0.25); break;
    default: QWidget::keyPressEvent(event); return;
  }
  event->accept();
}

double StepTimelineView::leftMargin() const {
  const QFontMetricsF fm(font());
  double widest = 0;
  for (int lane = 0; lane < LaneCount; ++lane) {
    widest = std::max(widest, fm.horizontalAdvance(tr(laneName(static_cast<Lane>(lane)))));
  }
  return std::max(kMinLeftMarginPx, widest + 12);
}

QRectF StepTimelineView::plotRect() const {
  const double left = leftMargin();
  return QRectF(left, kTopMarginPx, std::max(10.0, width() - left - kRightMarginPx),
                std::max(10.0, height() - kTopMarginPx - kAxisHeightPx));
}

QRectF StepTimelineView::lanesRect() const {
  const QRectF area = plotRect();
  return QRectF(area.left(), area.top(), area.width(), area.height() * 0.55);
}

const sim::SimEvent* StepTimelineView::eventAt(const QPointF& pos) const {
  if (!m_result) return nullptr;
  const QRectF area = lanesRect();
  if (!area.contains(pos)) return nullptr;
  const int lane = static_cast<int>((pos.y() - area.top()) / (area.height() / static_cast<int>(LaneCount)));
  // The event whose box holds the point; boxes are at least a pixel wide (paintLanes).
  const double halfPixelS = 0.5 * m_viewSpanS / area.width();
  const double t = m_viewStartS + (pos.x() - area.left()) / area.width() * m_viewSpanS;
  const sim::SimEvent* nearest = nullptr;
  for (const sim::SimEvent& e : m_result->events) {
    if (laneOf(e) != lane || e.start_s > t + halfPixelS || e.end_s < t - halfPixelS) continue;
    if (!nearest || e.end_s - e.start_s > nearest->end_s - nearest->start_s) nearest = &e;  // the longest
  }
  return nearest;
}

QString StepTimelineView::eventText(const sim::SimEvent& e) {
  const double duration = e.end_s - e.start_s;
  const QString length = duration >= 1.0 ? tr("%1 s").arg(duration, 0, 'f', 3) : tr("%1 ms").arg(duration * 1e3, 0, 'f', 3);
  return tr("%1 (%2): %3 from %4 s, %5")
      .arg(QString::fromStdString(sim::op_in_words(e.name)), QString::fromStdString(e.name), length)
      .arg(e.start_s, 0, 'g', 6)
      .arg(QString::fromLatin1(sim::category_name(e.category)));
}

Status StepTimelineView::exportTrace(const QString& path) const {
  if (!m_result) return Status::invalid("export trace: no simulated step (allowed: select a plan that fits)");
  return sim::write_chrome_trace(*m_result, path.toStdString());
}

bool StepTimelineView::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  if (const sim::SimEvent* e = eventAt(help->pos())) {
    QToolTip::showText(help->globalPos(), eventText(*e), this);
  } else {
    QToolTip::hideText();
    event->ignore();
  }
  return true;
}

double StepTimelineView::xOf(double timeS, const QRectF& area) const {
  return area.left() + (timeS - m_viewStartS) / m_viewSpanS * area.width();
}

void StepTimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (!m_result) {
    p.drawText(rect(), Qt::AlignCenter, tr("select a plan that fits to see its simulated step"));
    return;
  }
  p.setPen(Qt::black);
  p.drawText(QRectF(4, 2, width() - 8, kLineHeightPx), Qt::AlignLeft | Qt::AlignVCenter, exposedText());
  paintLegend(p);
  const QRectF area = plotRect();
  const QRectF lanes = lanesRect();
  const QRectF memory(area.left(), lanes.bottom() + 8, area.width(), area.bottom() - lanes.bottom() - 8);
  paintLanes(p, lanes);
  paintPhaseMarks(p, QRectF(lanes.topLeft(), memory.bottomRight()));
  paintMemory(p, memory);
  paintTimeAxis(p, QRectF(area.left(), area.bottom(), area.width(), kAxisHeightPx));
}

void StepTimelineView::paintLegend(QPainter& p) const {
  const QFontMetricsF fm(p.font());
  double x = 4;
  const double y = 2 + kLineHeightPx;
  for (int c = 0; c < sim::kNumOpCategories; ++c) {
    const auto category = static_cast<sim::OpCategory>(c);
    p.fillRect(QRectF(x, y + 4, 10, 10), categoryColor(category));
    const QString name = QString::fromLatin1(sim::category_name(category));
    p.setPen(Qt::black);
    p.drawText(QRectF(x + 14, y, fm.horizontalAdvance(name) + 2, kLineHeightPx), Qt::AlignLeft | Qt::AlignVCenter, name);
    x += 14 + fm.horizontalAdvance(name) + 14;
  }
  const QString marks = tr("dashed: where each phase begins");
  p.setPen(QColor(0x60, 0x60, 0x60));
  p.drawText(QRectF(x, y, width() - x - 4, kLineHeightPx), Qt::AlignLeft | Qt::AlignVCenter, marks);
}

void StepTimelineView::paintPhaseMarks(QPainter& p, const QRectF& area) const {
  p.save();
  p.setClipRect(area.adjusted(0, -1, 0, 1));
  const QFontMetricsF fm(p.font());
  double lastLabelRight = -1e9;  // labels that would overlap the previous one are left out
  for (const sim::PhaseStart& mark : m_phases) {
    const double x = xOf(mark.time_s, area);
    if (x < area.left() || x > area.right()) continue;
    p.setPen(QPen(QColor(0x60, 0x60, 0x60), 1, Qt::DashLine));
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    if (x > lastLabelRight + 4) {
      p.setPen(QColor(0x30, 0x30, 0x30));
      const QString label = QString::fromStdString(mark.words);
      p.drawText(QRectF(x + 2, area.top(), fm.horizontalAdvance(label) + 2, fm.height()), Qt::AlignLeft | Qt::AlignTop,
                 label);
      lastLabelRight = x + 2 + fm.horizontalAdvance(label);
    }
  }
  p.restore();
}

void StepTimelineView::paintLanes(QPainter& p, const QRectF& area) const {
  const double laneHeight = area.height() / static_cast<int>(LaneCount);
  for (int lane = 0; lane < LaneCount; ++lane) {
    p.setPen(Qt::black);
    p.drawText(QRectF(0, area.top() + lane * laneHeight, leftMargin() - 6, laneHeight), Qt::AlignRight | Qt::AlignVCenter,
               tr(laneName(static_cast<Lane>(lane))));
    p.fillRect(QRectF(area.left(), area.top() + lane * laneHeight + kLaneGapPx / 2, area.width(), laneHeight - kLaneGapPx),
               QColor(0xf4, 0xf4, 0xf4));
  }
  p.save();
  p.setClipRect(area);
  p.setPen(Qt::NoPen);
  // Events narrower than a pixel that touch on the same lane are painted as one box: a long step
  // has tens of thousands of events.
  std::array<QRectF, LaneCount> pending{};
  std::array<sim::OpCategory, LaneCount> pendingCategory{};
  std::array<const sim::SimEvent*, LaneCount> pendingEvent{};  // null when the box joins several
  const QFontMetricsF fm(p.font());
  const auto flush = [&](int lane) {
    if (pending[lane].isNull()) return;
    p.setBrush(categoryColor(pendingCategory[lane]));
    p.drawRect(pending[lane]);
    if (const sim::SimEvent* e = pendingEvent[lane]) {  // one event: its name where it fits
      const QString name = QString::fromStdString(sim::op_in_words(e->name));
      if (fm.horizontalAdvance(name) + 6 <= pending[lane].width()) {
        p.setPen(Qt::white);
        p.drawText(pending[lane].adjusted(3, 0, -3, 0), Qt::AlignLeft | Qt::AlignVCenter, name);
        p.setPen(Qt::NoPen);
      }
    }
    pending[lane] = QRectF();
    pendingEvent[lane] = nullptr;
  };
  const double viewEnd = m_viewStartS + m_viewSpanS;
  for (const sim::SimEvent& e : m_result->events) {
    if (e.end_s < m_viewStartS || e.start_s > viewEnd) continue;
    const int lane = laneOf(e);
    const double x0 = xOf(e.start_s, area), x1 = std::max(xOf(e.end_s, area), x0 + 1);
    const QRectF box(x0, area.top() + lane * laneHeight + kLaneGapPx, x1 - x0, laneHeight - 2 * kLaneGapPx);
    if (!pending[lane].isNull() && pendingCategory[lane] == e.category && x0 <= pending[lane].right() + 0.5) {
      pending[lane].setRight(std::max(pending[lane].right(), box.right()));
      pendingEvent[lane] = nullptr;
      continue;
    }
    flush(lane);
    pending[lane] = box;
    pendingCategory[lane] = e.category;
    pendingEvent[lane] = &e;
  }
  for (int lane = 0; lane < LaneCount; ++lane) flush(lane);
  p.restore();
}

void StepTimelineView::paintMemory(QPainter& p, const QRectF& area) const {
  const double top = std::max(m_capacityBytes, m_result->peak_memory_bytes) * 1.05;
  const auto yOf = [&](double bytes) { return area.bottom() - bytes / std::max(top, 1.0) * area.height(); };
  p.setPen(QColor(0x99, 0x99, 0x99));
  p.drawRect(area);
  // The axis: GiB ticks at 1/2/5 x 10^k (the top of the lane is an axis end, not a value).
  p.setPen(Qt::black);
  const double tick = tickStep(gib(top), 3);
  const QFontMetricsF fm(p.font());
  for (double g = 0; g <= gib(top) + 1e-9; g += tick) {
    const double y = yOf(g * kGiB);
    p.drawLine(QPointF(area.left() - 4, y), QPointF(area.left(), y));
    p.drawText(QRectF(0, y - fm.height() / 2, leftMargin() - 8, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(g, 'g', 4));
  }
  p.drawText(QRectF(2, area.top() - 2, leftMargin(), fm.height()), Qt::AlignLeft | Qt::AlignTop, tr("GiB"));
  p.save();
  p.setClipRect(area);
  QPainterPath curve;
  double lastBytes = 0;
  bool started = false;
  for (const sim::MemorySample& s : m_result->memory) {  // a step function: hold until the next sample
    const double x = xOf(s.time_s, area);
    if (!started) {
      curve.moveTo(x, yOf(s.bytes));
      started = true;
    } else {
      curve.lineTo(x, yOf(lastBytes));
      curve.lineTo(x, yOf(s.bytes));
    }
    lastBytes = s.bytes;
  }
  if (started) curve.lineTo(xOf(m_result->shown_time_s, area), yOf(lastBytes));
  p.setPen(QPen(QColor(0x4c, 0x78, 0xa8), 1.5));
  p.drawPath(curve);
  p.setPen(QPen(QColor(0xc0, 0x10, 0x10), 1.5, Qt::DashLine));
  p.drawLine(QPointF(area.left(), yOf(m_capacityBytes)), QPointF(area.right(), yOf(m_capacityBytes)));
  // Above the line when there is room, else just under it (the lane's top is 5% above the larger
  // of capacity and peak).
  const double capacityY = yOf(m_capacityBytes);
  const double labelY = capacityY - fm.height() - 1 >= area.top() ? capacityY - fm.height() - 1 : capacityY + 1;
  p.drawText(QRectF(area.left(), labelY, area.width() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter, capacityLabel());
  const QPointF peak(xOf(m_result->peak_time_s, area), yOf(m_result->peak_memory_bytes));
  p.setPen(Qt::black);
  p.setBrush(QColor(0xc0, 0x10, 0x10));
  p.drawEllipse(peak, 3.5, 3.5);
  const bool right = peak.x() < area.center().x();  // the label on the side with room
  const QRectF label(right ? peak.x() + 6 : peak.x() - 406, std::max(area.top(), peak.y() - fm.height() - 2), 400, fm.height());
  p.drawText(label, (right ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter, peakLabel());
  p.restore();
}

QString StepTimelineView::capacityLabel() const {
  return tr("capacity %1 GiB").arg(gib(m_capacityBytes), 0, 'f', 1);
}

QString StepTimelineView::peakLabel() const {
  if (!m_result) return {};
  return tr("peak %1 GiB: %2").arg(gib(m_result->peak_memory_bytes), 0, 'f', 1).arg(peakWhere());
}

QString StepTimelineView::tickText(double timeS, double stepS) {
  // No exponent ("1e+04 s" was unreadable): as many decimals as the tick step has, and separators.
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(stepS) + 1e-9)), 0, 9);
  return QLocale(QLocale::English).toString(timeS, 'f', decimals) + QStringLiteral(" s");
}

void StepTimelineView::paintTimeAxis(QPainter& p, const QRectF& area) const {
  const double step = tickStep(m_viewSpanS, 8);
  p.setPen(Qt::black);
  for (double t = std::ceil(m_viewStartS / step) * step; t <= m_viewStartS + m_viewSpanS + step * 1e-9; t += step) {
    const double x = xOf(t, area);
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.top() + 4));
    p.drawText(QRectF(x - 50, area.top() + 4, 100, area.height() - 4), Qt::AlignHCenter | Qt::AlignTop, tickText(t, step));
  }
}

}  // namespace spplan::gui
