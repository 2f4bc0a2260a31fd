// CorpusChartView: CorpusModel's histogram, documents per log-spaced length bin drawn as steps on a
// log2 length axis (a corpus's tail spans decades), with the plan's sequence length as a vertical
// red line named in the legend, and the share of documents longer than it (what the packing does
// to them) in the title. Without a corpus the title says how to open one and nothing is drawn.
#pragma once

#include <QChartView>

class QAreaSeries;
class QLineSeries;
class QLogValueAxis;
class QValueAxis;

namespace spplan::gui {

class CorpusModel;

class CorpusChartView : public QChartView {
  Q_OBJECT

 public:
  explicit CorpusChartView(CorpusModel* model, QWidget* parent = nullptr);

  // For tests: the sequence line's x (tokens; 0 when none is drawn), its legend name, and the title.
  double sequenceLineX() const;
  QString sequenceLineName() const;
  QString titleText() const;
  QLineSeries* histogramOutline() const { return m_outline; }

 private:
  void refresh();  // the series and the axis ranges from the model

  CorpusModel* m_model;
  QLogValueAxis* m_lengthAxis;
  QValueAxis* m_documentsAxis;
  QLineSeries* m_outline;  // the histogram's steps; the area under it is filled
  QAreaSeries* m_area;
  QLineSeries* m_sequence;
};

}  // namespace spplan::gui
