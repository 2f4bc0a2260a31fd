// The two charts. Both read their numbers from a model through Qt Charts' model mappers:
// MemoryChartView maps the selected row's GiB-by-category columns of PlanTableModel; SeqChartView
// maps SeqSweepModel. Neither keeps numbers of its own beyond what the mappers put in the series.
#pragma once

#include <QChartView>
#include <vector>

class QBarCategoryAxis;
class QHorizontalStackedBarSeries;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QVBarModelMapper;
class QValueAxis;
class QVXYModelMapper;

namespace spplan::gui {

class PlanTableModel;
class SeqSweepModel;

// Peak memory of one plan, stacked by category, with the GPU's capacity as a vertical line.
class MemoryChartView : public QChartView {
  Q_OBJECT

 public:
  explicit MemoryChartView(PlanTableModel* model, QWidget* parent = nullptr);
  void setRow(int row);  // -1: nothing selected

 private:
  void refresh();  // axis range, capacity line and title from the model's row

  PlanTableModel* m_model;
  int m_row = -1;
  QHorizontalStackedBarSeries* m_bars;
  QVBarModelMapper* m_mapper;
  QLineSeries* m_capacity;
  QValueAxis* m_valueAxis;
  QBarCategoryAxis* m_categoryAxis;
};

// Peak memory against sequence length for one knob set, with the capacity line.
class SeqChartView : public QChartView {
  Q_OBJECT

 public:
  explicit SeqChartView(SeqSweepModel* model, QWidget* parent = nullptr);
  const QLogValueAxis* seqAxis() const { return m_seqAxis; }  // for tests: its unit and range

 private:
  void refresh();  // axis ranges from the model

  SeqSweepModel* m_model;
  QLineSeries* m_peak;
  QScatterSeries* m_points;
  QLineSeries* m_capacity;
  QLogValueAxis* m_seqAxis;
  QValueAxis* m_memoryAxis;
  std::vector<QVXYModelMapper*> m_mappers;  // the series' x: k or M tokens (refresh)
};

}  // namespace spplan::gui
