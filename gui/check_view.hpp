// CheckView: the "Check a run" tab. Opens a run's logs (any format `spplan check` reads: an HF or
// TRL trainer_state.json, ArcticTraining's metrics, a DeepSpeed log, spplan run's --json or --log,
// torch memory lines, nvidia-smi CSV) and checks them against the plan selected in the table, or
// against a plan TOML opened here. Shows spplan check's words: the plan and logs, the verdict, the
// comparisons (CheckModel) with their measured band, the findings (CheckFindingsModel) and the
// charts (check_charts.hpp). A file that cannot be read shows read_run_log's one line, as the CLI
// prints it; nothing here opens a dialog but the file choosers.
#pragma once

#include <QStringList>
#include <QWidget>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"

class QLabel;
class QPushButton;
class QTableView;

namespace spplan::gui {

class CheckMemoryChartView;
class CheckModel;
class CheckStepChartView;

class CheckView : public QWidget {
  Q_OBJECT

 public:
  explicit CheckView(QWidget* parent = nullptr);

  // The plan table's selection (null: none); the run open is checked again against it unless a
  // plan file is open. REQUIRES: check_plan(*plan) is ok.
  void setSelectedPlan(const PlanSpec* plan);
  // What the file choosers open; the outcome goes to statusText() (message() carries the charts'
  // "Save image…" outcomes, as the other tabs').
  Status openLogs(const QStringList& paths);
  Status openPlan(const QString& path);
  void useSelectedPlan();

  CheckModel* model() const { return m_model; }
  QString statusText() const;   // the last outcome: the CLI's message on a failure
  QString verdictText() const;  // "as planned", "the run is not the plan", "" before a check
  QString summaryText() const;  // the plan and the logs with their formats
  QTableView* comparisonsTable() const { return m_comparisons; }
  QTableView* findingsTable() const { return m_findings; }
  CheckStepChartView* stepChart() const { return m_stepChart; }
  CheckMemoryChartView* memoryChart() const { return m_memoryChart; }

 public Q_SLOTS:
  void chooseLogs();  // file dialog: one or more logs of one run
  void choosePlan();  // file dialog: a plan TOML

 Q_SIGNALS:
  void message(const QString& text, bool ok);

 private:
  void showOutcome(const Status& status, const QString& done);
  void refresh();  // the labels, from the model

  CheckModel* m_model;
  QLabel* m_summaryLabel;
  QLabel* m_verdictLabel;
  QLabel* m_statusLabel;
  QPushButton* m_selectedButton;
  QTableView* m_comparisons;
  QTableView* m_findings;
  CheckStepChartView* m_stepChart;
  CheckMemoryChartView* m_memoryChart;
};

}  // namespace spplan::gui
