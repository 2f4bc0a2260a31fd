// SpScalingChartView: tokens/s (left axis) and peak memory per GPU with the capacity (right axis)
// against sp, mapped from SpScalingModel with QVXYModelMapper.
#pragma once

#include <QChartView>

class QLineSeries;
class QValueAxis;

namespace spplan::gui {

class SpScalingModel;

class SpScalingChartView : public QChartView {
  Q_OBJECT

 public:
  explicit SpScalingChartView(SpScalingModel* model, QWidget* parent = nullptr);

 private:
  void refresh();  // axis ranges from the model

  SpScalingModel* m_model;
  QValueAxis* m_spAxis;
  QValueAxis* m_tokensAxis;
  QValueAxis* m_memoryAxis;
};

}  // namespace spplan::gui
