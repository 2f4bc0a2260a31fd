// CheckModel: a run's logs checked against a plan, as `spplan check` checks them: each log read
// with read_run_log and merged (merge_into), the band from band_for (the shipped validation runs
// and SPPLAN_RUNS's), the report from check_run (planner/check). One row per comparison (peak
// memory, step time, tokens/s); findingsModel() lists the report's findings; the check tab's
// charts read run() and report() when the model resets. Nothing here computes a prediction or a
// finding: every number and word is planner/check's.
//
// The plan is the one selected in the plan table (setSelectedPlan) until a plan TOML is opened
// (openPlanFile, through load_plan as the CLI's --plan); useSelectedPlan() goes back to the table.
// A new plan re-checks the logs already read.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <optional>
#include <utility>

#include "planner/check/run_check.hpp"
#include "planner/core/status.hpp"

namespace spplan::gui {

class CheckFindingsModel;

class CheckModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { QuantityColumn, MeasuredAsColumn, PredictedColumn, MeasuredColumn, ErrorColumn, WithinColumn,
                BandColumn, ColumnCount };
  enum Role { ValueRole = Qt::UserRole };  // the number in its unit (bytes, seconds, tokens/s; error in %)

  explicit CheckModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The plan table's selection (null: none). REQUIRES: check_plan(*plan) is ok.
  void setSelectedPlan(const PlanSpec* plan);
  // A plan TOML, loaded as `spplan check --plan` loads it; fails in load_plan's words (the plan
  // checked stays).
  Status openPlanFile(const QString& path);
  void useSelectedPlan();
  // The logs of one run, read and merged as `spplan check RUNLOG...`; fails in read_run_log's words
  // on the first log it cannot read, and the run shown is then cleared.
  Status openLogs(const QStringList& paths);

  bool hasReport() const { return m_report.has_value(); }
  const PlanSpec* plan() const;
  QString planSource() const;  // the plan file's path, "" for the table's selection
  const QStringList& logs() const { return m_logs; }
  const check::RunMeasurements& run() const { return m_run; }
  const check::Band& band() const { return m_band; }
  // REQUIRES: hasReport().
  const check::CheckReport& report() const { return *m_report; }
  const check::Comparison& comparisonAt(int row) const { return m_report->comparisons.at(static_cast<size_t>(row)); }
  // The comparison of `quantity` ("peak_memory", "step_time", "tokens_per_s"), -1 when none.
  int rowOf(const std::string& quantity) const;

  // What the plan is and which logs were read in which format (spplan check's first line).
  QString summaryText() const;
  // spplan check's last line: "as planned" or "the run is not the plan"; "" before a check.
  QString verdictText() const;
  // The last failure (bad plan file, unreadable log, unreadable runs file), "" after a success.
  QString errorText() const { return m_error; }

  // The measured band a comparison is held against, as spplan check prints it: the memory band
  // for peak memory, the speed band for the rest.
  const ErrorStats& bandOf(const check::Comparison& c) const;
  // Inside the band: an error no larger than the largest the band's runs measured (nullopt: no
  // run measured it). bandRange: the measured values inside it, around the prediction.
  std::optional<bool> withinBand(int row) const;
  std::optional<std::pair<double, double>> bandRange(int row) const;

  CheckFindingsModel* findingsModel() const { return m_findings; }

 private:
  void recheck();
  std::optional<PlanSpec> m_selected;  // a copy: the table's rows change under it
  std::optional<PlanSpec> m_filePlan;
  QString m_filePath;
  QStringList m_logs;
  check::RunMeasurements m_run;
  check::Band m_band;
  std::optional<check::CheckReport> m_report;
  QString m_error;
  CheckFindingsModel* m_findings;
};

// The report's findings, one row each: verdict ("not the plan" or "note"), id, what the logs show,
// the likely cause (check::Finding's words).
class CheckFindingsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { VerdictColumn, IdColumn, WordsColumn, CauseColumn, ColumnCount };
  enum Role { NotThePlanRole = Qt::UserRole };  // bool

  explicit CheckFindingsModel(const CheckModel* check, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  friend class CheckModel;  // resets it with itself
  void begin() { beginResetModel(); }
  void end() { endResetModel(); }
  const CheckModel* m_check;
};

}  // namespace spplan::gui
