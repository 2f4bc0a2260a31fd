// StepTimelineView: the simulator's picture of one training step of the selected plan. Five lanes
// (compute, all-to-all, ZeRO, offload, host), a box per simulated event, and the device-memory
// timeline below on the same time axis with its peak and the GPU's capacity. Every number comes
// from sim::simulate_plan() (simulator/simulate.hpp); the view only scales and paints.
//
// Zoom: Ctrl+wheel or +/- around the cursor (or the middle), wheel or Left/Right pans, 0 shows
// the whole step. exposedText() names the communication the step waits for (SimResult's
// exposed_comm_s), as `spplan simulate` reports it. Boxes are coloured by kind (the legend under
// that line), named where they are wide enough, and a tooltip gives any box's op in words, its
// start and duration; dashed marks show where each micro step's forward and backward and the
// optimizer step begin. exportTrace() writes what `spplan simulate --trace` writes (Perfetto).
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "planner/core/status.hpp"
#include "simulator/op_words.hpp"
#include "simulator/simulate.hpp"

namespace spplan::gui {

class StepTimelineView : public QWidget {
  Q_OBJECT

 public:
  enum Lane { ComputeLane, A2aLane, ZeroLane, OffloadLane, HostLane, LaneCount };

  explicit StepTimelineView(QWidget* parent = nullptr);

  // Simulates `plan` with overlap; `capacityBytes` (the estimate's) is drawn on the memory curve.
  // REQUIRES: check_plan(plan) is ok.
  void setPlan(const PlanSpec& plan, double capacityBytes);
  void clear();

  const sim::SimResult* result() const { return m_result.get(); }
  double capacityBytes() const { return m_capacityBytes; }
  QString exposedText() const;
  // The memory lane's labels: "capacity 79.6 GiB"; "peak 84.1 GiB: layer 30, recompute, parameter
  // gather" (the op in words: simulator/op_words.hpp); peakWhere() is the part after the colon.
  QString capacityLabel() const;
  QString peakLabel() const;
  QString peakWhere() const;

  // The visible time window; zoomBy(2) halves its span around `centerFraction` of the width.
  double viewStartS() const { return m_viewStartS; }
  double viewSpanS() const { return m_viewSpanS; }
  void zoomBy(double factor, double centerFraction = 0.5);
  void panBy(double fractionOfSpan);
  void resetZoom();

  static Lane laneOf(const sim::SimEvent& event);
  static const char* laneName(Lane lane);

  // Where each phase of the step begins (sim::phase_starts), drawn as dashed marks.
  const std::vector<sim::PhaseStart>& phaseMarks() const { return m_phases; }
  // Where the lanes are drawn (widget coordinates), a lane's height each.
  QRectF lanesRect() const;
  // The event drawn under `pos` (widget coordinates), null where there is none.
  const sim::SimEvent* eventAt(const QPointF& pos) const;
  // What its tooltip says: "layer 3, forward, attention (m0.fwd.L3.attention): 1.234 ms from 0.5 s, compute".
  static QString eventText(const sim::SimEvent& event);
  // A time-axis label at a tick step of `stepS`: "15,000 s", "0.25 s", "0.004 s", never an exponent.
  static QString tickText(double timeS, double stepS);
  // Writes the step as Chrome trace-event JSON (simulator/trace_json.hpp) to `path`.
  Status exportTrace(const QString& path) const;

 Q_SIGNALS:
  void changed();  // a new result or a new zoom

 protected:
  bool event(QEvent* event) override;  // tooltips
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  QRectF plotRect() const;
  double leftMargin() const;  // the widest lane name, unclipped
  void paintLegend(QPainter& p) const;
  void paintLanes(QPainter& p, const QRectF& area) const;
  void paintPhaseMarks(QPainter& p, const QRectF& area) const;
  void paintMemory(QPainter& p, const QRectF& area) const;
  void paintTimeAxis(QPainter& p, const QRectF& area) const;
  double xOf(double timeS, const QRectF& area) const;

  std::unique_ptr<sim::SimResult> m_result;
  std::vector<sim::PhaseStart> m_phases;  // of m_result
  double m_capacityBytes = 0;
  double m_viewStartS = 0;
  double m_viewSpanS = 1;
};

}  // namespace spplan::gui
