// The check tab's two charts, predicted against measured, both read from CheckModel when it resets
// (its run() and report(); no numbers of their own):
//  - CheckStepChartView: each logged step's time, the plan's predicted step time as a line and
//    the measured band around it (CheckModel::bandRange);
//  - CheckMemoryChartView: the run's memory samples in log order (RunMeasurements'
//    memory_samples_bytes, when they sample the peak the check compares), else the measured peak
//    as one marker, against the predicted peak and its band.
#pragma once

#include <QChartView>

class QAreaSeries;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace spplan::gui {

class CheckModel;

// The parts both charts draw: a measured series, the prediction's line and the band's area.
class CheckChartBase : public QChartView {
  Q_OBJECT

 public:
  QLineSeries* measuredSeries() const { return m_measured; }
  QScatterSeries* measuredPoints() const { return m_points; }
  QLineSeries* predictedSeries() const { return m_predicted; }
  QAreaSeries* bandSeries() const { return m_band; }

 protected:
  CheckChartBase(CheckModel* model, const QString& title, const QString& xTitle, const QString& yTitle, QWidget* parent);
  // Draws `measured` (y in display units, x = 1, 2, ...) and, for the comparison of `quantity`,
  // the prediction and band divided by `unit`.
  void draw(const std::vector<double>& measured, const std::string& quantity, double unit);
  CheckModel* model() const { return m_model; }
  QValueAxis* xAxis() const { return m_xAxis; }

 private:
  CheckModel* m_model;
  QLineSeries* m_measured;
  QScatterSeries* m_points;
  QLineSeries* m_predicted;
  QLineSeries* m_bandLow;
  QLineSeries* m_bandHigh;
  QAreaSeries* m_band;
  QValueAxis* m_xAxis;
  QValueAxis* m_yAxis;
};

class CheckStepChartView : public CheckChartBase {
  Q_OBJECT

 public:
  explicit CheckStepChartView(CheckModel* model, QWidget* parent = nullptr);

 private:
  void refresh();
};

class CheckMemoryChartView : public CheckChartBase {
  Q_OBJECT

 public:
  explicit CheckMemoryChartView(CheckModel* model, QWidget* parent = nullptr);
  bool showsSamples() const { return m_samples; }  // false: the peak alone, one marker

 private:
  void refresh();
  bool m_samples = false;
};

}  // namespace spplan::gui
