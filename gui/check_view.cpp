#include "gui/check_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "gui/check_charts.hpp"
#include "gui/check_model.hpp"
#include "gui/image_export.hpp"
#include "planner/check/run_log.hpp"

namespace spplan::gui {
namespace {

QTableView* newTable(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setWordWrap(true);
  table->setAlternatingRowColors(true);
  return table;
}

QLabel* newLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

CheckView::CheckView(QWidget* parent) : QWidget(parent), m_model(new CheckModel(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* buttons = new QHBoxLayout;
  auto* open = new QPushButton(tr("Open run log…"), this);
  open->setObjectName("open-run-log");
  open->setToolTip(tr("Check one run's logs against the plan (Ctrl+L): %1").arg(QString::fromLatin1(check::kRunLogFormats)));
  auto* plan = new QPushButton(tr("Open plan…"), this);
  plan->setObjectName("open-check-plan");
  plan->setToolTip(tr("Check against a plan TOML (the one the run was launched from) instead of the selected plan"));
  m_selectedButton = new QPushButton(tr("Use the selected plan"), this);
  m_selectedButton->setToolTip(tr("Check against the plan selected in the table again"));
  m_selectedButton->setEnabled(false);
  connect(open, &QPushButton::clicked, this, &CheckView::chooseLogs);
  connect(plan, &QPushButton::clicked, this, &CheckView::choosePlan);
  connect(m_selectedButton, &QPushButton::clicked, this, &CheckView::useSelectedPlan);
  buttons->addWidget(open);
  buttons->addWidget(plan);
  buttons->addWidget(m_selectedButton);
  m_verdictLabel = newLabel(this);  // beside the buttons: the tab's height goes to the tables and charts
  m_verdictLabel->setMargin(3);
  buttons->addWidget(m_verdictLabel, 1);
  layout->addLayout(buttons);
  m_summaryLabel = newLabel(this);
  m_summaryLabel->setStyleSheet("color: #444;");
  layout->addWidget(m_summaryLabel);
  m_statusLabel = newLabel(this);
  layout->addWidget(m_statusLabel);

  // Left the tables (comparisons over findings), right the two charts.
  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* tables = new QSplitter(Qt::Vertical, split);
  m_comparisons = newTable(m_model, tables);
  m_comparisons->setAccessibleName(tr("Predicted against measured"));
  m_comparisons->setWordWrap(false);  // one line a quantity; the band's words whole in the tooltip
  m_findings = newTable(m_model->findingsModel(), tables);
  m_findings->setAccessibleName(tr("Findings"));
  m_findings->horizontalHeader()->setSectionResizeMode(CheckFindingsModel::WordsColumn, QHeaderView::Stretch);
  m_findings->horizontalHeader()->setSectionResizeMode(CheckFindingsModel::CauseColumn, QHeaderView::Stretch);
  tables->addWidget(m_comparisons);
  tables->addWidget(m_findings);
  split->addWidget(tables);
  const auto report = [this](const QString& text, bool ok) { Q_EMIT message(text, ok); };
  m_stepChart = new CheckStepChartView(m_model, split);
  m_memoryChart = new CheckMemoryChartView(m_model, split);
  split->addWidget(withImageExport(m_stepChart, "check-step-time", report));
  split->addWidget(withImageExport(m_memoryChart, "check-memory", report));
  split->setStretchFactor(0, 5);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 3);
  layout->addWidget(split, 1);
  connect(m_model, &QAbstractItemModel::modelReset, this, &CheckView::refresh);
  refresh();
}

void CheckView::setSelectedPlan(const PlanSpec* plan) { m_model->setSelectedPlan(plan); }

Status CheckView::openLogs(const QStringList& paths) {
  const Status s = m_model->openLogs(paths);
  showOutcome(s, m_model->hasReport() ? tr("checked %1: %2").arg(paths.size() == 1 ? tr("1 log") : tr("%1 logs").arg(paths.size()), m_model->verdictText())
                                      : tr("read %1: select a plan in the table or open a plan TOML").arg(paths.join(", ")));
  return s;
}

Status CheckView::openPlan(const QString& path) {
  const Status s = m_model->openPlanFile(path);
  if (s) m_selectedButton->setEnabled(true);
  showOutcome(s, tr("checking against %1").arg(path));
  return s;
}

void CheckView::useSelectedPlan() {
  m_model->useSelectedPlan();
  m_selectedButton->setEnabled(false);
  showOutcome(Status::ok(), tr("checking against the plan selected in the table"));
}

void CheckView::chooseLogs() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Open the logs of one run"), QString(), tr("Run logs (*.json *.jsonl *.log *.csv *.txt);;All files (*)"));
  if (!paths.isEmpty()) openLogs(paths);
}

void CheckView::choosePlan() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open the plan the run was launched from"), QString(),
                                                    tr("Plan files (*.toml);;All files (*)"));
  if (!path.isEmpty()) openPlan(path);
}

void CheckView::showOutcome(const Status& status, const QString& done) {
  m_statusLabel->setStyleSheet(status ? "color: #105010;" : "color: #c00000; font-weight: bold;");
  m_statusLabel->setText(status ? done : QString::fromStdString(status.message()));
}

void CheckView::refresh() {
  m_summaryLabel->setText(m_model->summaryText());
  m_findings->resizeRowsToContents();  // the words wrap
  const QString verdict = m_model->verdictText();
  if (verdict.isEmpty()) {
    m_verdictLabel->setStyleSheet("");
    m_verdictLabel->clear();
    return;
  }
  const bool asPlanned = m_model->report().as_planned();
  m_verdictLabel->setStyleSheet(asPlanned ? "background: #d6f0d6; color: #105010; font-weight: bold;"
                                          : "background: #fde2c8; color: #7a3000; font-weight: bold;");
  m_verdictLabel->setText(verdict);
}

QString CheckView::statusText() const { return m_statusLabel->text(); }
QString CheckView::verdictText() const { return m_verdictLabel->text(); }
QString CheckView::summaryText() const { return m_summaryLabel->text(); }

}  // namespace spplan::gui
