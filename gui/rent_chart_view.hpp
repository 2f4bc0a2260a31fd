// RentChartView: one bar per RentModel row for the chosen metric ($/Mtok, step time or the longest
// sequence), read from the model's hidden numeric columns and sorted by value, the best at the top
// (the cheapest, the quickest step, the longest sequence); rows where nothing fits at the bottom.
// The cheapest row's bar is green and the fastest's (tokens/s) blue, as in the table, and both are
// named in the title.
#pragma once

#include <QChartView>
#include <QList>
#include <QStringList>

class QBarCategoryAxis;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace spplan::gui {

class RentModel;

class RentChartView : public QChartView {
  Q_OBJECT

 public:
  explicit RentChartView(RentModel* model, QWidget* parent = nullptr);

  // A RentModel::Chart*Column.
  void setMetricColumn(int column);
  int metricColumn() const { return m_column; }
  QList<int> markedBars() const;  // the model rows whose bars are drawn in a marking colour
  // The model rows in bar order, bottom to top (the best last: at the top).
  const QList<int>& barOrder() const { return m_order; }

 private:
  void refresh();  // categories, bars, axis range and title from the model

  RentModel* m_model;
  int m_column;
  QHorizontalStackedBarSeries* m_bars;
  // Each row's value sits in one set (the others hold 0 there), so each bar takes that set's colour.
  QBarSet* m_plain;
  QBarSet* m_cheapest;
  QBarSet* m_fastest;
  QBarCategoryAxis* m_categories;
  QValueAxis* m_values;
  QList<int> m_order;
};

}  // namespace spplan::gui
