#include "gui/rent_chart_view.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QValueAxis>
#include <algorithm>

#include "gui/rent_model.hpp"

namespace spplan::gui {
namespace {

const QColor kPlain(0x4c, 0x78, 0xa8);
const QColor kCheapest(0x2c, 0xa0, 0x2c);  // the table's cheapest row is green
const QColor kFastest(0x1f, 0x5f, 0xc0);   // and its fastest blue

}  // namespace

RentChartView::RentChartView(RentModel* model, QWidget* parent)
    : QChartView(parent), m_model(model), m_column(RentModel::ChartUsdPerMtokColumn) {
  auto* chart = new QChart();
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->hide();
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_bars = new QHorizontalStackedBarSeries(chart);  // row labels read left of the bars
  m_plain = new QBarSet(tr("other"), m_bars);
  m_cheapest = new QBarSet(tr("cheapest"), m_bars);
  m_fastest = new QBarSet(tr("fastest"), m_bars);
  m_plain->setColor(kPlain);
  m_cheapest->setColor(kCheapest);
  m_fastest->setColor(kFastest);
  m_bars->append({m_plain, m_cheapest, m_fastest});
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
  refresh();
}

QList<int> RentChartView::markedBars() const {
  QList<int> rows;
  for (int row : {m_model->cheapestRow(), m_model->fastestRow()}) {
    if (row >= 0 && !rows.contains(row)) rows << row;
  }
  return rows;
}

void RentChartView::refresh() {
  const auto value = [this](int row) { return m_model->index(row, m_column).data().toDouble(); };
  // Bottom to top, so the best ends on top: the longest sequence is best at its largest, a price
  // or a step time at its smallest; rows where nothing fits (0) at the bottom either way.
  const bool higherIsBetter = m_column == RentModel::ChartMaxSeqKiloColumn;
  m_order.clear();
  for (int r = 0; r < m_model->rowCount(); ++r) m_order << r;
  std::stable_sort(m_order.begin(), m_order.end(), [&](int a, int b) {
    const double va = value(a), vb = value(b);
    if ((va > 0) != (vb > 0)) return va <= 0;  // no fit first (the bottom)
    return higherIsBetter ? va < vb : va > vb;
  });
  QStringList labels;
  QList<qreal> plain, cheapest, fastest;
  double top = 0;
  for (int r : m_order) {
    labels << m_model->rowLabel(r);
    const double v = value(r);
    top = std::max(top, v);
    const bool isCheapest = r == m_model->cheapestRow(), isFastest = r == m_model->fastestRow() && !isCheapest;
    plain << (isCheapest || isFastest ? 0.0 : v);
    cheapest << (isCheapest ? v : 0.0);
    fastest << (isFastest ? v : 0.0);
  }
  m_plain->remove(0, m_plain->count());
  m_cheapest->remove(0, m_cheapest->count());
  m_fastest->remove(0, m_fastest->count());
  m_plain->append(plain);
  m_cheapest->append(cheapest);
  m_fastest->append(fastest);
  m_categories->setCategories(labels);
  m_values->setRange(0, top > 0 ? top * 1.1 : 1);
  m_values->applyNiceNumbers();  // ticks at 1, 2, 2.5 or 5 x 10^k: no 0.37, 0.74, ...
  m_values->setLabelFormat(QStringLiteral("%.3g"));
  m_values->setTitleText(m_model->headerData(m_column, Qt::Horizontal).toString());
  QString title = m_model->headerData(m_column, Qt::Horizontal).toString() + tr(" (best plan per GPU and shape; best on top)");
  if (m_model->cheapestRow() >= 0) {
    title += m_model->cheapestRow() == m_model->fastestRow()
                 ? tr("<br>green: cheapest and fastest %1").arg(m_model->rowLabel(m_model->cheapestRow()))
                 : tr("<br>green: cheapest %1; blue: fastest %2")
                       .arg(m_model->rowLabel(m_model->cheapestRow()), m_model->rowLabel(m_model->fastestRow()));
  }
  chart()->setTitle(title);
}

}  // namespace spplan::gui
