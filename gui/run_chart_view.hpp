// RunChartView: a live run's loss (left axis), step time and peak memory (right axes) per step,
// mapped from RunStepModel; the axes grow as rows arrive.
#pragma once

#include <QChartView>

class QValueAxis;

namespace spplan::gui {

class RunStepModel;

class RunChartView : public QChartView {
  Q_OBJECT

 public:
  explicit RunChartView(RunStepModel* model, QWidget* parent = nullptr);

 private:
  void refresh();

  RunStepModel* m_model;
  QValueAxis* m_stepAxis;
  QValueAxis* m_lossAxis;
  QValueAxis* m_secondsAxis;
  QValueAxis* m_mibAxis;
};

}  // namespace spplan::gui
