// RentChartView: one bar per RentModel row for the chosen metric ($/Mtok, step time or the longest
// sequence), read through a QVBarModelMapper from the model's hidden numeric columns. The cheapest
// and the fastest rows' bars are drawn selected (another color) and named in the title.
#pragma once

#include <QChartView>

class QBarCategoryAxis;
class QHorizontalBarSeries;
class QVBarModelMapper;
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
  QList<int> markedBars() const;  // the bars drawn in the marking color

 private:
  void refresh();  // categories, axis range, marked bars and title from the model

  RentModel* m_model;
  int m_column;
  QHorizontalBarSeries* m_bars;
  QVBarModelMapper* m_mapper;
  QBarCategoryAxis* m_categories;
  QValueAxis* m_values;
};

}  // namespace spplan::gui
