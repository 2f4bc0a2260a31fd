// SpScalingChartView: tokens/s (left axis, solid) and peak memory per GPU (right axis, dashed) of
// the three layouts of SpScalingModel (Ulysses, ring, Ulysses x ring) against the degree sp x cp
// on a log2 axis, with the GPU's capacity; points over capacity are drawn red, as in the Memory tab.
// Each layout's legend names the trainers its rows are priced on (a ring the plan's trainer cannot
// run is priced on another, a 1.8x move by itself). The memory axis is framed on the capacity, up to
// kMemoryFrame x capacity: a layout needing thousands of GiB at degree 1 would flatten the region
// that decides what fits; points above run off the top, red on the tokens line as well.
#pragma once

#include <QChartView>
#include <vector>

class QLineSeries;
class QLogValueAxis;
class QValueAxis;

namespace spplan::gui {

class SpScalingModel;

class SpScalingChartView : public QChartView {
  Q_OBJECT

 public:
  static constexpr double kMemoryFrame = 1.5;

  explicit SpScalingChartView(SpScalingModel* model, QWidget* parent = nullptr);

  // For tests: the memory axis's top, and a layout's tokens line's legend name.
  double memoryAxisMax() const;
  QString tokensSeriesName(int layout) const;

 private:
  void refresh();  // the series' points and the axis ranges from the model

  SpScalingModel* m_model;
  QLogValueAxis* m_degreeAxis;
  QValueAxis* m_tokensAxis;
  QValueAxis* m_memoryAxis;
  std::vector<QLineSeries*> m_tokens;  // per layout
  std::vector<QLineSeries*> m_memory;  // per layout
  QLineSeries* m_capacity;
};

}  // namespace spplan::gui
