#include "gui/run_chart_view.hpp"

#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QVXYModelMapper>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/run_step_model.hpp"

namespace spplan::gui {

RunChartView::RunChartView(RunStepModel* model, QWidget* parent) : QChartView(parent), m_model(model) {
  auto* chart = new QChart();
  chart->setTitle(tr("Live run: measured per step"));
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_stepAxis = new QValueAxis(chart);
  m_stepAxis->setTitleText(tr("step"));
  m_stepAxis->setLabelFormat("%d");
  m_lossAxis = new QValueAxis(chart);
  m_lossAxis->setTitleText(tr("loss"));
  m_secondsAxis = new QValueAxis(chart);
  m_secondsAxis->setTitleText(tr("step s"));
  m_mibAxis = new QValueAxis(chart);
  m_mibAxis->setTitleText(tr("peak MiB"));
  m_mibAxis->setLabelFormat("%.1f");
  chart->addAxis(m_stepAxis, Qt::AlignBottom);
  chart->addAxis(m_lossAxis, Qt::AlignLeft);
  chart->addAxis(m_secondsAxis, Qt::AlignRight);
  chart->addAxis(m_mibAxis, Qt::AlignRight);
  const struct { const char* name; int column; QValueAxis* axis; QColor color; } lines[] = {
      {"loss", RunStepModel::LossColumn, m_lossAxis, QColor(0x4c, 0x78, 0xa8)},
      {"step s", RunStepModel::StepSecondsColumn, m_secondsAxis, QColor(0xf5, 0x85, 0x18)},
      {"peak MiB", RunStepModel::PeakMibColumn, m_mibAxis, QColor(0x54, 0xa2, 0x4b)}};
  for (const auto& l : lines) {
    auto* series = new QLineSeries(chart);
    series->setName(tr(l.name));
    series->setPointsVisible(true);
    series->setPen(QPen(l.color, 2));
    auto* mapper = new QVXYModelMapper(this);
    mapper->setXColumn(RunStepModel::StepColumn);
    mapper->setYColumn(l.column);
    mapper->setSeries(series);
    mapper->setModel(m_model);
    chart->addSeries(series);
    series->attachAxis(m_stepAxis);
    series->attachAxis(l.axis);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::rowsInserted, this, &RunChartView::refresh);
  connect(m_model, &QAbstractItemModel::modelReset, this, &RunChartView::refresh);
  refresh();
}

void RunChartView::refresh() {
  double maxStep = 1, minLoss = 1e300, maxLoss = 0, maxSeconds = 0, maxMib = 0;
  for (int r = 0; r < m_model->rowCount(); ++r) {
    const StepProgress& s = m_model->stepAt(r);
    maxStep = std::max(maxStep, static_cast<double>(s.step));
    if (std::isfinite(s.loss)) {
      minLoss = std::min(minLoss, s.loss);
      maxLoss = std::max(maxLoss, s.loss);
    }
    maxSeconds = std::max(maxSeconds, s.stepTimeS);
    maxMib = std::max(maxMib, s.peakMemoryBytes / (1024.0 * 1024.0));
  }
  m_stepAxis->setTickType(QValueAxis::TicksDynamic);  // whole steps only
  m_stepAxis->setTickAnchor(0);
  m_stepAxis->setTickInterval(std::max(1.0, std::ceil(maxStep / 8)));
  m_stepAxis->setRange(0, maxStep + 1);
  // The loss's own range, not from 0: a few steps move it by a fraction of a percent.
  if (maxLoss > 0) {
    const double pad = std::max((maxLoss - minLoss) * 0.2, 1e-3 * maxLoss);
    m_lossAxis->setRange(minLoss - pad, maxLoss + pad);
  } else {
    m_lossAxis->setRange(0, 1);
  }
  m_secondsAxis->setRange(0, maxSeconds > 0 ? maxSeconds * 1.1 : 1);
  m_mibAxis->setRange(0, maxMib > 0 ? maxMib * 1.1 : 1);
}

}  // namespace spplan::gui
