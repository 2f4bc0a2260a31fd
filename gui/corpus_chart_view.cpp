#include "gui/corpus_chart_view.hpp"

#include <QAreaSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

#include "gui/corpus_model.hpp"
#include "planner/core/parse.hpp"

namespace spplan::gui {
namespace {

const QColor kBars(0x4c, 0x78, 0xa8);
const QColor kSequence(0xc0, 0x10, 0x10);

}  // namespace

CorpusChartView::CorpusChartView(CorpusModel* model, QWidget* parent) : QChartView(parent), m_model(model) {
  auto* chart = new QChart();
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  m_lengthAxis = new QLogValueAxis(chart);
  m_lengthAxis->setBase(2);
  m_lengthAxis->setTitleText(tr("document length in tokens (log scale, %1 bins a doubling)").arg(CorpusModel::kBinsPerDoubling));
  m_lengthAxis->setLabelFormat("%.0f");
  m_lengthAxis->setMinorTickCount(0);
  m_documentsAxis = new QValueAxis(chart);
  // No title: the legend says documents, and at 1280 x 800 the plot is shorter than the word.
  m_documentsAxis->setLabelFormat("%.0f");
  chart->addAxis(m_lengthAxis, Qt::AlignBottom);
  chart->addAxis(m_documentsAxis, Qt::AlignLeft);
  m_outline = new QLineSeries(chart);
  m_area = new QAreaSeries(m_outline);  // no lower line: filled down to 0 documents
  m_area->setName(tr("documents per length bin"));
  m_area->setPen(QPen(kBars.darker(130), 1));
  m_area->setBrush(kBars);
  chart->addSeries(m_area);
  m_area->attachAxis(m_lengthAxis);
  m_area->attachAxis(m_documentsAxis);
  m_sequence = new QLineSeries(chart);
  m_sequence->setPen(QPen(kSequence, 2, Qt::DashLine));
  chart->addSeries(m_sequence);
  m_sequence->attachAxis(m_lengthAxis);
  m_sequence->attachAxis(m_documentsAxis);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::modelReset, this, &CorpusChartView::refresh);
  refresh();
}

void CorpusChartView::refresh() {
  const auto value = [&](int row, int column) { return m_model->index(row, column).data(CorpusModel::ValueRole).toDouble(); };
  const int rows = m_model->rowCount();
  if (!m_model->hasCorpus() || rows == 0) {
    chart()->setTitle(tr("No corpus: open a lengths file (Corpus, above) to see its document lengths against the plan's "
                         "sequence"));
    m_outline->clear();
    m_sequence->clear();
    m_sequence->setName(tr("sequence length"));
    m_area->setVisible(false);
    m_sequence->setVisible(false);
    m_lengthAxis->setRange(1, 1 << 17);
    m_documentsAxis->setRange(0, 1);
    return;
  }
  // Steps: up at each bin's low edge, across to its high edge, down to the next bin's height.
  QList<QPointF> steps;
  double maxDocuments = 0;
  const double first = value(0, CorpusModel::LowColumn), last = value(rows - 1, CorpusModel::HighColumn);
  steps.append({first, 0});
  for (int r = 0; r < rows; ++r) {
    const double documents = value(r, CorpusModel::DocumentsColumn);
    steps.append({value(r, CorpusModel::LowColumn), documents});
    steps.append({value(r, CorpusModel::HighColumn), documents});
    maxDocuments = std::max(maxDocuments, documents);
  }
  steps.append({last, 0});
  m_outline->replace(steps);
  const double top = maxDocuments * 1.1;
  const double seq = static_cast<double>(m_model->seqLen());
  m_sequence->replace(QList<QPointF>{{seq, 0}, {seq, top}});
  m_sequence->setName(tr("sequence length %1 (%2 tokens): %3")
                          .arg(QString::fromStdString(seq_text(m_model->seqLen())),
                               QString::fromStdString(count_text(seq)), m_model->longerText()));
  m_area->setVisible(true);
  m_sequence->setVisible(true);
  chart()->setTitle(tr("Corpus: %1").arg(m_model->summaryText()));
  // The line always inside the frame, however far the sequence is from the corpus's lengths.
  m_lengthAxis->setRange(std::min(first, seq) / 1.2, std::max(last, seq) * 1.2);
  m_documentsAxis->setRange(0, top > 0 ? top : 1);
  m_documentsAxis->applyNiceNumbers();
}

double CorpusChartView::sequenceLineX() const { return m_sequence->count() > 0 ? m_sequence->at(0).x() : 0; }

QString CorpusChartView::sequenceLineName() const { return m_sequence->name(); }

QString CorpusChartView::titleText() const { return chart()->title(); }

}  // namespace spplan::gui
