#include "gui/charts.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>
#include <QVBarModelMapper>
#include <QVXYModelMapper>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/plan_table_model.hpp"
#include "gui/seq_sweep_model.hpp"

namespace spplan::gui {
namespace {

QPen capacityPen() {
  QPen pen(QColor(0xc0, 0x10, 0x10));
  pen.setWidth(2);
  pen.setStyle(Qt::DashLine);
  return pen;
}

// 0 .. a little above `maxGib`, at most about 8 ticks on a 1/2/5 x 10^k GiB step.
void setGibRange(QValueAxis* axis, double maxGib) {
  const double raw = std::max(maxGib, 1.0) * 1.05 / 8;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw <= decade ? decade : raw <= 2 * decade ? 2 * decade : raw <= 5 * decade ? 5 * decade : 10 * decade;
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  axis->setRange(0, step * std::ceil(std::max(maxGib, 1.0) * 1.05 / step));
}

QChart* newChart(const QString& title) {
  auto* chart = new QChart();
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  return chart;
}

}  // namespace

MemoryChartView::MemoryChartView(PlanTableModel* model, QWidget* parent)
    : QChartView(parent), m_model(model) {
  QChart* chart = newChart(tr("Peak memory per GPU"));
  m_bars = new QHorizontalStackedBarSeries(chart);
  m_bars->setBarWidth(0.6);
  chart->legend()->setAlignment(Qt::AlignRight);  // seven categories do not fit in one row
  m_mapper = new QVBarModelMapper(this);
  m_mapper->setFirstBarSetColumn(PlanTableModel::FirstMemoryColumn);
  m_mapper->setLastBarSetColumn(PlanTableModel::LastMemoryColumn);
  m_mapper->setRowCount(0);
  m_mapper->setSeries(m_bars);
  m_mapper->setModel(m_model);
  m_capacity = new QLineSeries(chart);
  m_capacity->setName(tr("capacity"));
  m_capacity->setPen(capacityPen());

  chart->addSeries(m_bars);
  chart->addSeries(m_capacity);
  m_valueAxis = new QValueAxis(chart);
  m_valueAxis->setTitleText(tr("GiB per GPU"));
  m_valueAxis->setLabelFormat("%.0f");
  m_categoryAxis = new QBarCategoryAxis(chart);
  m_categoryAxis->append(tr("peak"));
  chart->addAxis(m_valueAxis, Qt::AlignBottom);
  chart->addAxis(m_categoryAxis, Qt::AlignLeft);
  for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(m_bars), static_cast<QAbstractSeries*>(m_capacity)}) {
    s->attachAxis(m_valueAxis);
    s->attachAxis(m_categoryAxis);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::modelReset, this, [this] { setRow(-1); });
}

void MemoryChartView::setRow(int row) {
  m_row = row >= 0 && row < m_model->rowCount() ? row : -1;
  m_mapper->setFirstRow(std::max(m_row, 0));
  m_mapper->setRowCount(m_row >= 0 ? 1 : 0);
  refresh();
}

void MemoryChartView::refresh() {
  m_capacity->clear();
  if (m_row < 0) {
    chart()->setTitle(tr("Peak memory per GPU (no plan selected)"));
    setGibRange(m_valueAxis, 10);
    return;
  }
  auto value = [this](int column) {
    return m_model->data(m_model->index(m_row, column), PlanTableModel::ValueRole).toDouble();
  };
  const double capacityGib = value(PlanTableModel::CapacityGibColumn);
  const double peakGib = value(PlanTableModel::PeakGibColumn);
  m_capacity->append(capacityGib, -0.5);
  m_capacity->append(capacityGib, 0.5);
  setGibRange(m_valueAxis, std::max(capacityGib, peakGib));
  const bool fits = m_model->planAt(m_row).estimate.fits;
  const QString which = fits ? tr("plan %1").arg(m_row + 1) : tr("closest plan (does not fit)");
  chart()->setTitle(tr("Peak memory per GPU, %1: %2 of %3 GiB at %4")
                        .arg(which)
                        .arg(peakGib, 0, 'f', 1)
                        .arg(capacityGib, 0, 'f', 1)
                        .arg(QString::fromStdString(m_model->planAt(m_row).estimate.memory.peak_phase)));
}

SeqChartView::SeqChartView(SeqSweepModel* model, QWidget* parent) : QChartView(parent), m_model(model) {
  QChart* chart = newChart(tr("Peak memory vs sequence length (selected plan's knobs)"));
  m_peak = new QLineSeries(chart);
  m_peak->setName(tr("peak per GPU"));
  m_points = new QScatterSeries(chart);
  m_points->setMarkerSize(8);
  m_capacity = new QLineSeries(chart);
  m_capacity->setName(tr("capacity"));
  m_capacity->setPen(capacityPen());
  const struct { QXYSeries* series; int yColumn; } maps[] = {
      {m_peak, SeqSweepModel::PeakGibColumn}, {m_points, SeqSweepModel::PeakGibColumn},
      {m_capacity, SeqSweepModel::CapacityGibColumn}};
  for (const auto& m : maps) {
    auto* mapper = new QVXYModelMapper(this);
    m_mappers.push_back(mapper);
    mapper->setXColumn(SeqSweepModel::SeqKiloColumn);
    mapper->setYColumn(m.yColumn);
    mapper->setSeries(m.series);
    mapper->setModel(m_model);
    chart->addSeries(m.series);
  }
  m_seqAxis = new QLogValueAxis(chart);
  m_seqAxis->setBase(2);
  m_seqAxis->setLabelFormat("%gk");
  m_seqAxis->setTitleText(tr("sequence length (tokens, k = 1024)"));
  m_memoryAxis = new QValueAxis(chart);
  m_memoryAxis->setTitleText(tr("GiB per GPU"));
  m_memoryAxis->setLabelFormat("%.0f");
  chart->addAxis(m_seqAxis, Qt::AlignBottom);
  chart->addAxis(m_memoryAxis, Qt::AlignLeft);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{m_peak, m_points, m_capacity}) {
    s->attachAxis(m_seqAxis);
    s->attachAxis(m_memoryAxis);
  }
  chart->legend()->markers(m_points).first()->setVisible(false);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::modelReset, this, &SeqChartView::refresh);
  refresh();
}

void SeqChartView::refresh() {
  const int rows = m_model->rowCount();
  if (rows == 0) {
    m_seqAxis->setRange(1, 1024);
    setGibRange(m_memoryAxis, 10);
    return;
  }
  auto value = [this](int row, int column) { return m_model->data(m_model->index(row, column)).toDouble(); };
  // Past 4M tokens the axis counts M ("16M", not the unreadable "16384k"), binary as --seq's suffixes.
  const bool mega = value(rows - 1, SeqSweepModel::SeqKiloColumn) >= 4096;
  const int xColumn = mega ? SeqSweepModel::SeqMegaColumn : SeqSweepModel::SeqKiloColumn;
  for (QVXYModelMapper* mapper : m_mappers) mapper->setXColumn(xColumn);
  m_seqAxis->setLabelFormat(mega ? "%gM" : "%gk");
  m_seqAxis->setTitleText(mega ? tr("sequence length (tokens, M = 1024 k)") : tr("sequence length (tokens, k = 1024)"));
  double maxGib = 0;
  for (int r = 0; r < rows; ++r) {
    maxGib = std::max({maxGib, value(r, SeqSweepModel::PeakGibColumn), value(r, SeqSweepModel::CapacityGibColumn)});
  }
  m_seqAxis->setRange(value(0, xColumn) / 1.3, value(rows - 1, xColumn) * 1.3);
  setGibRange(m_memoryAxis, maxGib);
  // Lengths that do not fit in red (the mapper refilled the points on the reset).
  m_points->clearPointsConfiguration();
  for (int r = 0; r < rows; ++r) {
    if (!m_model->data(m_model->index(r, SeqSweepModel::FitsColumn)).toBool()) {
      m_points->setPointConfiguration(r, QXYSeries::PointConfiguration::Color, QColor(0xc0, 0x10, 0x10));
    }
  }
}

}  // namespace spplan::gui
