#include "gui/plan_tabs.hpp"

#include <QComboBox>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>

#include "gui/charts.hpp"
#include "gui/check_view.hpp"
#include "gui/corpus_chart_view.hpp"
#include "gui/corpus_model.hpp"
#include "gui/image_export.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/rent_chart_view.hpp"
#include "gui/rent_model.hpp"
#include "gui/run_panel.hpp"
#include "gui/seq_sweep_model.hpp"
#include "gui/sp_scaling_chart_view.hpp"
#include "gui/sp_scaling_model.hpp"
#include "gui/step_timeline_view.hpp"
#include "gui/trust.hpp"

namespace spplan::gui {
namespace {

QTableView* newTable(QAbstractItemModel* model, int visibleColumns, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  for (int c = visibleColumns; c < model->columnCount(); ++c) table->setColumnHidden(c, true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->setAlternatingRowColors(true);
  return table;
}

// A tab's page inside a scroll area that fits it to the space there is: the pages' smallest sizes
// (the run panel's inputs, the timeline's lanes) no longer hold the window taller than the plan
// table's ten rows leave at 1280 x 800; below their smallest they scroll.
QScrollArea* scrolled(QWidget* page) {
  auto* area = new QScrollArea;
  area->setWidget(page);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  return area;
}

// What to rent's order: the column's number (RentModel::ValueRole), its words for text columns;
// an option where nothing fits (NaN) last whichever way the column sorts.
class RentSortProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool lessThan(const QModelIndex& a, const QModelIndex& b) const override {
    const QVariant x = a.data(RentModel::ValueRole), y = b.data(RentModel::ValueRole);
    if (x.typeId() == QMetaType::QString || y.typeId() == QMetaType::QString) return x.toString() < y.toString();
    const double u = x.toDouble(), v = y.toDouble();
    const bool u_missing = std::isnan(u), v_missing = std::isnan(v);
    if (u_missing || v_missing) {
      if (u_missing == v_missing) return false;
      // Descending reverses lessThan's order: invert it there, so the missing stay last.
      const bool a_first = v_missing;
      return sortOrder() == Qt::AscendingOrder ? a_first : !a_first;
    }
    return u < v;
  }
};

}  // namespace

const char* PlanTabs::tabFileName(int tab) {
  static const char* const kNames[TabCount] = {"planner", "timeline", "rent", "sp-scaling", "run", "check", "corpus"};
  return kNames[tab];
}

PlanTabs::PlanTabs(PlanTableModel* plans, const TrustTable* trust, QWidget* parent)
    : QTabWidget(parent),
      m_plans(plans),
      m_trust(trust),
      m_sweepModel(new SeqSweepModel(this)),
      m_rentModel(new RentModel(this)),
      m_scalingModel(new SpScalingModel(this)),
      m_corpusModel(new CorpusModel(this)) {
  m_rentModel->setTrust(trust);
  addTab(scrolled(buildMemoryTab()), tr("&Memory"));
  addTab(scrolled(buildTimelineTab()), tr("Step t&imeline"));
  addTab(scrolled(buildRentTab()), tr("What to &rent"));
  addTab(scrolled(buildScalingTab()), tr("S&P scaling"));
  m_runPanel = new RunPanel(this);
  addTab(scrolled(m_runPanel), tr("Run i&t"));
  m_checkView = new CheckView(this);
  connect(m_checkView, &CheckView::message, this, &PlanTabs::message);
  addTab(scrolled(m_checkView), tr("Chec&k a run"));
  m_corpusChart = new CorpusChartView(m_corpusModel, this);
  addTab(scrolled(withImageExport(m_corpusChart, "corpus", [this](const QString& text, bool ok) { Q_EMIT message(text, ok); })),
         tr("C&orpus"));
  connect(this, &QTabWidget::currentChanged, this, [this](int index) {
    if (index == RentTab) updateRent();
  });
}

QWidget* PlanTabs::buildMemoryTab() {
  const auto report = [this](const QString& text, bool ok) { Q_EMIT message(text, ok); };
  m_memoryChart = new MemoryChartView(m_plans, this);
  auto* tab = new QWidget(this);
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* charts = new QSplitter(Qt::Horizontal, tab);
  charts->addWidget(withImageExport(m_memoryChart, "memory", report));
  charts->addWidget(withImageExport(new SeqChartView(m_sweepModel, this), "peak-vs-seq", report));
  layout->addWidget(charts, 1);
  m_hostLabel = new QLabel(tab);  // renting decides on the node's RAM as often as on the GPUs'
  m_hostLabel->setStyleSheet("color: #404080;");
  m_hostLabel->setAccessibleName(tr("Host memory"));
  layout->addWidget(m_hostLabel);
  return tab;
}

QWidget* PlanTabs::buildTimelineTab() {
  const auto report = [this](const QString& text, bool ok) { Q_EMIT message(text, ok); };
  m_timeline = new StepTimelineView(this);
  // The trace `spplan simulate --trace` writes, for Perfetto's own zoom and search: a picture is not a tool.
  auto* trace = new QPushButton(tr("Export Perfetto trace…"), this);
  trace->setObjectName("export-trace");
  trace->setToolTip(tr("Chrome trace-event JSON of the simulated step, as spplan simulate --trace writes it; open it in "
                       "ui.perfetto.dev"));
  connect(trace, &QPushButton::clicked, this, [this, report] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Perfetto trace"), QStringLiteral("step.trace.json"),
                                                      tr("Trace JSON (*.json)"));
    if (path.isEmpty()) return;
    const Status s = m_timeline->exportTrace(path);
    report(s ? tr("wrote %1").arg(path) : QString::fromStdString(s.message()), s.is_ok());
  });
  connect(m_timeline, &StepTimelineView::changed, trace, [this, trace] { trace->setEnabled(m_timeline->result() != nullptr); });
  trace->setEnabled(false);
  return withImageExport(m_timeline, "timeline", report, {trace});
}

QWidget* PlanTabs::buildRentTab() {
  auto* tab = new QWidget(this);
  auto* tabLayout = new QVBoxLayout(tab);
  auto* note = new QLabel(tr("max seq (any knobs): the longest sequence each GPU and shape fits with the knobs searched, "
                             "± the planner's measured memory error there. The banner's longest sequence keeps the selected "
                             "plan's own knobs, so it can be shorter. \"your GPUs\": your GPU and count, beside what you "
                             "could rent."),
                          tab);
  note->setWordWrap(true);
  note->setStyleSheet("color: #404080;");
  tabLayout->addWidget(note);
  auto* rent = new QSplitter(Qt::Horizontal, tab);
  tabLayout->addWidget(rent, 1);
  auto* sorted = new RentSortProxy(tab);
  sorted->setSourceModel(m_rentModel);
  QTableView* table = newTable(sorted, RentModel::VisibleColumnCount, rent);
  // What a renter compares first: the price of the tokens; any header click sorts by its column.
  table->setSortingEnabled(true);
  table->sortByColumn(RentModel::UsdPerMtokColumn, Qt::AscendingOrder);
  table->setMinimumWidth(640);
  m_rentTable = table;
  rent->addWidget(table);
  auto* right = new QWidget(rent);
  auto* layout = new QVBoxLayout(right);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* metric = new QComboBox(right);
  metric->addItem(tr("price per million tokens"), RentModel::ChartUsdPerMtokColumn);
  metric->addItem(tr("step time"), RentModel::ChartStepSecondsColumn);
  metric->addItem(tr("longest sequence that fits"), RentModel::ChartMaxSeqKiloColumn);
  metric->setAccessibleName(tr("Chart metric"));
  layout->addWidget(metric);
  m_rentChart = new RentChartView(m_rentModel, right);
  layout->addWidget(withImageExport(m_rentChart, "rent", [this](const QString& text, bool ok) { Q_EMIT message(text, ok); }), 1);
  connect(metric, &QComboBox::currentIndexChanged, this,
          [this, metric](int) { m_rentChart->setMetricColumn(metric->currentData().toInt()); });
  rent->addWidget(right);
  rent->setStretchFactor(0, 3);
  rent->setStretchFactor(1, 1);
  rent->setSizes({1000, 330});  // the table's columns whole at the default window width
  return tab;
}

QWidget* PlanTabs::buildScalingTab() {
  auto* scaling = new QWidget(this);
  auto* layout = new QVBoxLayout(scaling);
  m_scalingTrustLabel = new QLabel(scaling);
  m_scalingTrustLabel->setStyleSheet("color: #404080;");
  layout->addWidget(m_scalingTrustLabel);
  auto* split = new QSplitter(Qt::Horizontal, scaling);
  // Columns sized to their text, the table as wide as they are: nothing cut off beside the chart.
  QTableView* table = newTable(m_scalingModel, SpScalingModel::ColumnCount, split);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  split->addWidget(table);
  split->addWidget(withImageExport(new SpScalingChartView(m_scalingModel, split), "sp-scaling",
                                   [this](const QString& text, bool ok) { Q_EMIT message(text, ok); }));
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  return scaling;
}

void PlanTabs::setBase(const std::optional<PlanSpec>& base, const search::KnobConstraints& constraints) {
  m_base = base;
  m_rentConstraints = constraints;
  m_rentConstraints.sp.reset();
  m_rentStale = true;
  if (!base) m_rentModel->clear();
  if (currentIndex() == RentTab) updateRent();
}

void PlanTabs::updateRent() {
  if (!m_rentStale) return;
  m_rentStale = false;
  if (m_base) m_rentModel->setBaseAsync(*m_base, m_rentConstraints);  // the re-plan does not wait for it
}

QString PlanTabs::hostMemoryLine() const { return m_hostLabel->text(); }

void PlanTabs::setSelected(int row, const std::string& gpu) {
  m_memoryChart->setRow(row);
  if (row < 0) {
    m_sweepModel->clear();
    m_scalingModel->clear();
    m_timeline->clear();
    m_runPanel->setPlan(nullptr, {});
    m_checkView->setSelectedPlan(nullptr);
    m_scalingTrustLabel->clear();
    m_hostLabel->clear();
    return;
  }
  const search::RankedPlan& selected = m_plans->planAt(row);
  m_hostLabel->setText(hostMemoryDetail(selected.estimate));
  const QString gpuName = QString::fromStdString(gpu);
  const QString trust = m_trust ? m_trust->shortText(gpu) : tr("accuracy unknown");
  m_sweepModel->setPlan(selected.plan);
  m_scalingModel->setPlan(selected.plan);
  m_scalingTrustLabel->setText(tr("Predictions for %1; measured error on this GPU: %2").arg(gpuName, trust));
  m_timeline->setPlan(selected.plan, selected.estimate.capacity_bytes);
  // The panel runs spplan-engine: its own measured accuracy on this GPU says the most, when known.
  const QString engine = m_trust ? m_trust->trainerText(gpu, "engine") : QString();
  m_runPanel->setPlan(&selected, engine.isEmpty() ? tr("Measured error on %1: %2.").arg(gpuName, trust) : engine + ".");
  m_checkView->setSelectedPlan(&selected.plan);  // the row's PlanSpec, as the table shows it
}

}  // namespace spplan::gui
