#include "gui/sp_scaling_chart_view.hpp"

#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QVXYModelMapper>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "gui/sp_scaling_model.hpp"

namespace spplan::gui {

SpScalingChartView::SpScalingChartView(SpScalingModel* model, QWidget* parent) : QChartView(parent), m_model(model) {
  auto* chart = new QChart();
  chart->setTitle(tr("Scaling with sp (selected plan's other knobs)"));
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_spAxis = new QValueAxis(chart);
  m_spAxis->setTitleText(tr("sp (Ulysses degree)"));
  m_spAxis->setLabelFormat("%d");
  m_tokensAxis = new QValueAxis(chart);
  m_tokensAxis->setTitleText(tr("tokens/s (cluster)"));
  m_tokensAxis->setLabelFormat("%.0f");
  m_memoryAxis = new QValueAxis(chart);
  m_memoryAxis->setTitleText(tr("GiB per GPU"));
  m_memoryAxis->setLabelFormat("%.0f");
  chart->addAxis(m_spAxis, Qt::AlignBottom);
  chart->addAxis(m_tokensAxis, Qt::AlignLeft);
  chart->addAxis(m_memoryAxis, Qt::AlignRight);
  const struct { const char* name; int column; QValueAxis* axis; QColor color; Qt::PenStyle style; } lines[] = {
      {"tokens/s", SpScalingModel::TokensPerSecondColumn, m_tokensAxis, QColor(0x4c, 0x78, 0xa8), Qt::SolidLine},
      {"peak GiB per GPU", SpScalingModel::PeakGibColumn, m_memoryAxis, QColor(0xf5, 0x85, 0x18), Qt::SolidLine},
      {"capacity", SpScalingModel::CapacityGibColumn, m_memoryAxis, QColor(0xc0, 0x10, 0x10), Qt::DashLine}};
  for (const auto& l : lines) {
    auto* series = new QLineSeries(chart);
    series->setName(tr(l.name));
    series->setPointsVisible(true);
    series->setPen(QPen(l.color, 2, l.style));
    auto* mapper = new QVXYModelMapper(this);
    mapper->setXColumn(SpScalingModel::SpColumn);
    mapper->setYColumn(l.column);
    mapper->setSeries(series);
    mapper->setModel(m_model);
    chart->addSeries(series);
    series->attachAxis(m_spAxis);
    series->attachAxis(l.axis);
  }
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::modelReset, this, &SpScalingChartView::refresh);
  refresh();
}

void SpScalingChartView::refresh() {
  double maxSp = 1, maxTokens = 0, maxGib = 0;
  for (int r = 0; r < m_model->rowCount(); ++r) {
    const auto value = [&](int column) { return m_model->index(r, column).data().toDouble(); };
    maxSp = std::max(maxSp, value(SpScalingModel::SpColumn));
    maxTokens = std::max(maxTokens, value(SpScalingModel::TokensPerSecondColumn));
    maxGib = std::max({maxGib, value(SpScalingModel::PeakGibColumn), value(SpScalingModel::CapacityGibColumn)});
  }
  // Ticks on whole degrees (labels "%d" of fractional ticks would lie about where points are).
  m_spAxis->setTickType(QValueAxis::TicksDynamic);
  m_spAxis->setTickAnchor(0);
  m_spAxis->setTickInterval(std::max(1.0, std::pow(2.0, std::ceil(std::log2(maxSp / 8)))));
  m_spAxis->setRange(0, maxSp + 0.5);
  m_tokensAxis->setRange(0, maxTokens > 0 ? maxTokens * 1.1 : 1);
  m_tokensAxis->applyNiceNumbers();  // round ticks
  m_memoryAxis->setRange(0, maxGib > 0 ? maxGib * 1.1 : 1);
  m_memoryAxis->applyNiceNumbers();
}

}  // namespace spplan::gui
