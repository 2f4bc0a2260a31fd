// SpScalingChartView: tokens/s (left axis, solid) and peak memory per GPU (right axis, dashed) of
// the three layouts of SpScalingModel (Ulysses, ring, Ulysses x ring) against the degree sp x cp
// on a log2 axis, with the GPU's capacity; points over capacity are drawn red, as in the Memory tab.
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
  explicit SpScalingChartView(SpScalingModel* model, QWidget* parent = nullptr);

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
