#include "gui/sp_scaling_chart_view.hpp"

#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QStringList>
#include <QValueAxis>
#include <algorithm>

#include "gui/sp_scaling_model.hpp"

namespace spplan::gui {
namespace {

const QColor kLayoutColors[SpScalingModel::LayoutCount] = {QColor(0x4c, 0x78, 0xa8), QColor(0x54, 0xa2, 0x4b),
                                                          QColor(0xb0, 0x7a, 0xa1)};
const QColor kOverCapacity(0xc0, 0x10, 0x10);

}  // namespace

SpScalingChartView::SpScalingChartView(SpScalingModel* model, QWidget* parent) : QChartView(parent), m_model(model) {
  auto* chart = new QChart();
  chart->setTitle(tr("Ulysses, ring and both at each degree (selected plan's other knobs; each line on the trainer "
                     "in brackets)"));
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
  // Degrees are powers of two, or close: a log2 axis spreads 1, 2, 4 ... 256 evenly.
  m_degreeAxis = new QLogValueAxis(chart);
  m_degreeAxis->setBase(2);
  m_degreeAxis->setTitleText(tr("sp x cp (GPUs per sequence)"));
  m_degreeAxis->setLabelFormat("%d");
  m_degreeAxis->setMinorTickCount(0);
  m_tokensAxis = new QValueAxis(chart);
  m_tokensAxis->setTitleText(tr("tokens/s (cluster), solid"));
  m_tokensAxis->setLabelFormat("%.0f");
  m_memoryAxis = new QValueAxis(chart);
  m_memoryAxis->setTitleText(tr("GiB per GPU, dashed (to %1x capacity)").arg(kMemoryFrame));
  m_memoryAxis->setLabelFormat("%.0f");
  chart->addAxis(m_degreeAxis, Qt::AlignBottom);
  chart->addAxis(m_tokensAxis, Qt::AlignLeft);
  chart->addAxis(m_memoryAxis, Qt::AlignRight);
  const auto addSeries = [&](const QString& name, const QColor& color, Qt::PenStyle style, QValueAxis* axis) {
    auto* series = new QLineSeries(chart);
    series->setName(name);
    series->setPointsVisible(true);
    series->setPen(QPen(color, 2, style));
    chart->addSeries(series);
    series->attachAxis(m_degreeAxis);
    series->attachAxis(axis);
    return series;
  };
  for (int l = 0; l < SpScalingModel::LayoutCount; ++l) {
    const QString name = tr(SpScalingModel::layoutName(static_cast<SpScalingModel::Layout>(l)));
    m_tokens.push_back(addSeries(name, kLayoutColors[l], Qt::SolidLine, m_tokensAxis));
  }
  for (int l = 0; l < SpScalingModel::LayoutCount; ++l) {
    const QString name = tr(SpScalingModel::layoutName(static_cast<SpScalingModel::Layout>(l)));
    m_memory.push_back(addSeries(tr("%1 GiB").arg(name), kLayoutColors[l], Qt::DashLine, m_memoryAxis));
    // One legend entry per layout (its colour); the axis titles say solid and dashed.
    for (QLegendMarker* marker : chart->legend()->markers(m_memory.back())) marker->setVisible(false);
  }
  m_capacity = addSeries(tr("capacity"), kOverCapacity, Qt::DotLine, m_memoryAxis);
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  connect(m_model, &QAbstractItemModel::modelReset, this, &SpScalingChartView::refresh);
  refresh();
}

void SpScalingChartView::refresh() {
  double maxDegree = 2, maxTokens = 0, maxGib = 0, capacity = 0;
  const auto value = [&](int row, int column) {
    return m_model->index(row, column).data(SpScalingModel::ValueRole).toDouble();
  };
  for (int l = 0; l < SpScalingModel::LayoutCount; ++l) {
    const auto layout = static_cast<SpScalingModel::Layout>(l);
    QList<QPointF> tokens, memory;
    QStringList trainers;  // the trainers this layout's rows are priced on, in degree order
    const int first = m_model->firstRow(layout), count = m_model->rowCountOf(layout);
    for (int r = first; r < first + count; ++r) {
      const QString trainer = m_model->index(r, SpScalingModel::TrainerColumn).data().toString();
      if (!trainers.contains(trainer)) trainers.append(trainer);
      const double degree = value(r, SpScalingModel::DegreeColumn);
      tokens.append({degree, value(r, SpScalingModel::TokensPerSecondColumn)});
      memory.append({degree, value(r, SpScalingModel::PeakGibColumn)});
      maxDegree = std::max(maxDegree, degree);
      maxTokens = std::max(maxTokens, tokens.back().y());
      maxGib = std::max(maxGib, memory.back().y());
      capacity = value(r, SpScalingModel::CapacityGibColumn);
    }
    for (QLineSeries* s : {m_tokens[static_cast<size_t>(l)], m_memory[static_cast<size_t>(l)]}) {
      s->clearPointsConfiguration();
    }
    const QString name = tr(SpScalingModel::layoutName(layout));
    m_tokens[static_cast<size_t>(l)]->setName(trainers.isEmpty() ? name : tr("%1 (%2)").arg(name, trainers.join(", ")));
    m_tokens[static_cast<size_t>(l)]->replace(tokens);
    m_memory[static_cast<size_t>(l)]->replace(memory);
    // Over capacity: the point red on both of its layout's lines.
    for (int i = 0; i < count; ++i) {
      if (m_model->index(first + i, SpScalingModel::FitsColumn).data(SpScalingModel::ValueRole).toBool()) continue;
      for (QLineSeries* s : {m_tokens[static_cast<size_t>(l)], m_memory[static_cast<size_t>(l)]}) {
        s->setPointConfiguration(i, QXYSeries::PointConfiguration::Color, kOverCapacity);
        s->setPointConfiguration(i, QXYSeries::PointConfiguration::Size, 7.0);
      }
    }
  }
  m_capacity->replace(QList<QPointF>{{1, capacity}, {maxDegree, capacity}});
  m_degreeAxis->setRange(1, maxDegree * 1.2);
  m_tokensAxis->setRange(0, maxTokens > 0 ? maxTokens * 1.1 : 1);
  m_tokensAxis->applyNiceNumbers();
  const double memoryTop = capacity > 0 ? std::min(std::max(maxGib, capacity), kMemoryFrame * capacity) : maxGib;
  m_memoryAxis->setRange(0, memoryTop > 0 ? memoryTop * 1.05 : 1);
  m_memoryAxis->applyNiceNumbers();
}

double SpScalingChartView::memoryAxisMax() const { return m_memoryAxis->max(); }

QString SpScalingChartView::tokensSeriesName(int layout) const { return m_tokens.at(static_cast<size_t>(layout))->name(); }

}  // namespace spplan::gui
