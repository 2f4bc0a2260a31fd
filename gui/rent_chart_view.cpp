#include "gui/rent_chart_view.hpp"

#include <QBarCategoryAxis>
#include <QHorizontalBarSeries>
#include <QBarSet>
#include <QLegend>
#include <QVBarModelMapper>
#include <QValueAxis>
#include <algorithm>

#include "gui/rent_model.hpp"

namespace spplan::gui {

RentChartView::RentChartView(RentModel* model, QWidget* parent)
    : QChartView(parent), m_model(model), m_column(RentModel::ChartUsdPerMtokColumn) {
  auto* chart = new QChart();
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->hide();
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_bars = new QHorizontalBarSeries(chart);  // row labels read left of the bars
  m_mapper = new QVBarModelMapper(this);
  m_mapper->setSeries(m_bars);
  m_mapper->setModel(m_model);
  chart->addSeries(m_bars);
  m_categories = new QBarCategoryAxis(chart);
  m_values = new QValueAxis(chart);
  m_categories->setTruncateLabels(false);  // "h200-141gb 4x8" in full: the plot gives way
  chart->addAxis(m_categories, Qt::AlignLeft);
  chart->addAxis(m_values, Qt::AlignBottom);
  m_bars->attachAxis(m_categories);
  m_bars->attachAxis(m_values);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setMetricColumn(m_column);
  connect(m_model, &QAbstractItemModel::modelReset, this, &RentChartView::refresh);
}

void RentChartView::setMetricColumn(int column) {
  m_column = column;
  m_mapper->setFirstBarSetColumn(column);
  m_mapper->setLastBarSetColumn(column);
  refresh();
}

QList<int> RentChartView::markedBars() const {
  return m_bars->barSets().isEmpty() ? QList<int>() : m_bars->barSets().front()->selectedBars();
}

void RentChartView::refresh() {
  QStringList labels;
  for (int r = 0; r < m_model->rowCount(); ++r) labels << m_model->rowLabel(r);
  m_categories->setCategories(labels);
  double top = 0;
  for (int r = 0; r < m_model->rowCount(); ++r) top = std::max(top, m_model->index(r, m_column).data().toDouble());
  m_values->setRange(0, top > 0 ? top * 1.1 : 1);
  m_values->applyNiceNumbers();  // ticks at 1, 2, 2.5 or 5 x 10^k: no 0.37, 0.74, ...
  m_values->setLabelFormat(QStringLiteral("%.3g"));
  m_values->setTitleText(m_model->headerData(m_column, Qt::Horizontal).toString());
  QString title = m_model->headerData(m_column, Qt::Horizontal).toString() + tr(" (best plan per GPU and shape)");
  if (!m_bars->barSets().isEmpty()) {
    QBarSet* set = m_bars->barSets().front();
    set->setColor(QColor(0x4c, 0x78, 0xa8));
    set->setSelectedColor(QColor(0x2c, 0xa0, 0x2c));
    set->deselectAllBars();
    for (int marked : {m_model->cheapestRow(), m_model->fastestRow()}) {
      if (marked >= 0) set->selectBar(marked);
    }
  }
  if (m_model->cheapestRow() >= 0) {
    title += tr("<br>green: cheapest %1, fastest %2")
                 .arg(m_model->rowLabel(m_model->cheapestRow()), m_model->rowLabel(m_model->fastestRow()));
  }
  chart()->setTitle(title);
}

}  // namespace spplan::gui
