#include "gui/check_charts.hpp"

#include <QAreaSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/check_model.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {

CheckChartBase::CheckChartBase(CheckModel* model, const QString& title, const QString& xTitle, const QString& yTitle,
                               QWidget* parent)
    : QChartView(parent), m_model(model) {
  auto* chart = new QChart();
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_bandLow = new QLineSeries(chart);
  m_bandHigh = new QLineSeries(chart);
  m_band = new QAreaSeries(m_bandHigh, m_bandLow);
  m_band->setName(tr("measured band"));
  m_band->setColor(QColor(0x4c, 0x78, 0xa8, 60));
  m_band->setBorderColor(QColor(0x4c, 0x78, 0xa8, 90));
  m_predicted = new QLineSeries(chart);
  m_predicted->setName(tr("predicted"));
  m_predicted->setPen(QPen(QColor(0x4c, 0x78, 0xa8), 2, Qt::DashLine));
  m_measured = new QLineSeries(chart);
  m_measured->setName(tr("measured"));
  m_measured->setPen(QPen(QColor(0xf5, 0x85, 0x18), 2));
  m_points = new QScatterSeries(chart);
  m_points->setName(tr("measured"));
  m_points->setColor(QColor(0xf5, 0x85, 0x18));
  m_points->setMarkerSize(9);
  m_xAxis = new QValueAxis(chart);
  m_xAxis->setTitleText(xTitle);
  m_xAxis->setLabelFormat("%d");
  m_yAxis = new QValueAxis(chart);
  m_yAxis->setTitleText(yTitle);
  chart->addAxis(m_xAxis, Qt::AlignBottom);
  chart->addAxis(m_yAxis, Qt::AlignLeft);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{m_band, m_predicted, m_measured, m_points}) {
    chart->addSeries(s);
    s->attachAxis(m_xAxis);
    s->attachAxis(m_yAxis);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(260, 180);
}

void CheckChartBase::draw(const std::vector<double>& measured, const std::string& quantity, double unit) {
  QList<QPointF> points;
  double top = 0;
  for (size_t i = 0; i < measured.size(); ++i) {
    points << QPointF(static_cast<double>(i + 1), measured[i]);
    top = std::max(top, measured[i]);
  }
  m_measured->replace(points);
  m_points->replace(points);
  // One "measured" in the legend, the points' (a series shown again shows its marker again).
  for (QLegendMarker* marker : chart()->legend()->markers(m_measured)) marker->setVisible(false);
  const double right = static_cast<double>(std::max<size_t>(measured.size(), 1)) + 0.5;
  const int row = m_model->rowOf(quantity);
  QList<QPointF> predicted, low, high;
  if (row >= 0) {
    const double p = m_model->comparisonAt(row).predicted / unit;
    predicted << QPointF(0.5, p) << QPointF(right, p);
    top = std::max(top, p);
    if (const auto band = m_model->bandRange(row)) {
      // A wide band (no upper end at 100% or more) stops at half again the largest number drawn.
      const double cap = 1.5 * top;
      const double bandHigh = std::isfinite(band->second) ? std::min(band->second / unit, cap) : cap;
      top = std::max(top, bandHigh);
      low << QPointF(0.5, band->first / unit) << QPointF(right, band->first / unit);
      high << QPointF(0.5, bandHigh) << QPointF(right, bandHigh);
    }
  }
  m_predicted->replace(predicted);
  m_bandLow->replace(low);
  m_bandHigh->replace(high);
  m_band->setVisible(!low.isEmpty());
  m_xAxis->setRange(0.5, right);
  m_xAxis->setTickType(QValueAxis::TicksDynamic);  // whole numbers only
  m_xAxis->setTickAnchor(1);
  m_xAxis->setTickInterval(std::max(1.0, std::ceil((right - 0.5) / 8)));
  m_yAxis->setRange(0, top > 0 ? top * 1.1 : 1);
  m_yAxis->applyNiceNumbers();
}

CheckStepChartView::CheckStepChartView(CheckModel* model, QWidget* parent)
    : CheckChartBase(model, tr("Step time: each logged step against the plan"), tr("step"), tr("seconds"), parent) {
  connect(model, &QAbstractItemModel::modelReset, this, &CheckStepChartView::refresh);
  refresh();
}

void CheckStepChartView::refresh() {
  const std::vector<double> none;
  const std::vector<double>& steps = model()->hasReport() ? model()->run().step_times_s : none;
  draw(steps, "step_time", 1);
  chart()->setTitle(model()->hasReport() && steps.empty() ? tr("Step time: the logs time no step")
                                                          : tr("Step time: each logged step against the plan"));
}

CheckMemoryChartView::CheckMemoryChartView(CheckModel* model, QWidget* parent)
    : CheckChartBase(model, tr("Peak memory: the run's samples against the plan"), tr("sample (log order)"),
                     tr("GiB per GPU"), parent) {
  connect(model, &QAbstractItemModel::modelReset, this, &CheckMemoryChartView::refresh);
  refresh();
}

void CheckMemoryChartView::refresh() {
  std::vector<double> gib;
  m_samples = false;
  const int row = model()->hasReport() ? model()->rowOf("peak_memory") : -1;
  if (row >= 0) {
    const check::RunMeasurements& run = model()->run();
    // The samples of the peak the comparison measured, else that peak alone.
    m_samples = !run.memory_samples_bytes.empty() && run.memory_samples_of == check::compared_memory(run);
    if (m_samples) {
      for (double bytes : run.memory_samples_bytes) gib.push_back(bytes / kGiB);
    } else {
      gib.push_back(model()->comparisonAt(row).measured / kGiB);
    }
  }
  measuredSeries()->setVisible(m_samples);  // one marker needs no line
  draw(gib, "peak_memory", kGiB);
  // The axis says what measured it: the allocator, its reserved pool or the whole device.
  const QString as = row >= 0 ? QString::fromStdString(model()->comparisonAt(row).measured_as) : QString();
  xAxis()->setTitleText(as.isEmpty() ? tr("sample (log order)")
                        : m_samples  ? tr("%1: samples in log order").arg(as)
                                     : tr("%1: the peak").arg(as));
  chart()->setTitle(model()->hasReport() && row < 0 ? tr("Peak memory: the logs hold none")
                                                    : tr("Peak memory: the run's samples against the plan"));
}

}  // namespace spplan::gui
