#include "gui/check_model.hpp"

#include <QColor>
#include <cmath>
#include <cstdio>
#include <limits>

#include "planner/check/run_log.hpp"
#include "planner/check/user_runs.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {
namespace {

QString stringOf(const std::string& s) { return QString::fromStdString(s); }

// A comparison's number as spplan check prints it.
QString quantityText(const std::string& quantity, double v) {
  char buf[64];
  if (quantity == "peak_memory") std::snprintf(buf, sizeof buf, "%.2f GiB", v / kGiB);
  else if (quantity == "step_time") std::snprintf(buf, sizeof buf, "%.4g s", v);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return QString::fromLatin1(buf);
}

}  // namespace

CheckModel::CheckModel(QObject* parent) : QAbstractTableModel(parent), m_findings(new CheckFindingsModel(this, this)) {}

int CheckModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->comparisons.size());
}

int CheckModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CheckModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const check::Comparison& c = comparisonAt(index.row());
  if (role == ValueRole) {
    switch (index.column()) {
      case PredictedColumn: return c.predicted;
      case MeasuredColumn: return c.measured;
      case ErrorColumn: return c.error_pct();
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() >= PredictedColumn && index.column() <= ErrorColumn) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case QuantityColumn: return stringOf(c.quantity);
    case MeasuredAsColumn: return stringOf(c.measured_as);
    case PredictedColumn: return quantityText(c.quantity, c.predicted);
    case MeasuredColumn: return quantityText(c.quantity, c.measured);
    case ErrorColumn: return QString::asprintf("%+.1f%%", c.error_pct());
    case BandColumn: {
      const bool memory = c.quantity == "peak_memory";
      return stringOf(check::band_words(bandOf(c), memory ? m_band.your_memory : m_band.your_speed, m_band.scope));
    }
    case WithinColumn: {
      const std::optional<bool> within = withinBand(index.row());
      return !within ? tr("not validated") : *within ? tr("within") : tr("outside");
    }
    default: return {};
  }
}

QVariant CheckModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  static const char* const kHeaders[ColumnCount] = {"quantity", "measured as", "predicted", "measured",
                                                    "error",    "in band",     "measured band"};
  return QString::fromLatin1(kHeaders[section]);
}

void CheckModel::setSelectedPlan(const PlanSpec* plan) {
  if (plan) m_selected = *plan;
  else m_selected.reset();
  if (!m_filePlan) recheck();
}

Status CheckModel::openPlanFile(const QString& path) {
  Result<PlanSpec> plan = load_plan(path.toStdString());
  if (!plan.ok()) {
    m_error = stringOf(plan.status().message());
    return plan.status();
  }
  m_filePlan = std::move(*plan);
  m_filePath = path;
  m_error.clear();
  recheck();
  return Status::ok();
}

void CheckModel::useSelectedPlan() {
  m_filePlan.reset();
  m_filePath.clear();
  recheck();
}

Status CheckModel::openLogs(const QStringList& paths) {
  check::RunMeasurements run;
  for (const QString& path : paths) {
    Result<check::RunMeasurements> one = check::read_run_log(path.toStdString());
    if (!one.ok()) {
      m_logs.clear();
      m_run = {};
      m_error = stringOf(one.status().message());
      recheck();
      return one.status();
    }
    check::merge_into(&run, *one);
  }
  m_logs = paths;
  m_run = std::move(run);
  m_error.clear();
  recheck();
  return m_error.isEmpty() ? Status::ok() : Status::invalid(m_error.toStdString());
}

void CheckModel::recheck() {
  beginResetModel();
  m_findings->begin();
  m_report.reset();
  if (const PlanSpec* p = plan(); p && !m_logs.isEmpty()) {
    // As spplan check without --runs: SPPLAN_RUNS's files beside the shipped results.
    Result<check::Band> band = check::band_for(*p, check::runs_files_from_environment());
    if (band.ok()) {
      m_band = *band;
      m_report = check::check_run(*p, m_run, m_band);
    } else {
      m_error = stringOf(band.status().message());
    }
  }
  m_findings->end();
  endResetModel();
}

const PlanSpec* CheckModel::plan() const {
  if (m_filePlan) return &*m_filePlan;
  return m_selected ? &*m_selected : nullptr;
}

QString CheckModel::planSource() const { return m_filePath; }

int CheckModel::rowOf(const std::string& quantity) const {
  for (int r = 0; r < rowCount(); ++r) {
    if (comparisonAt(r).quantity == quantity) return r;
  }
  return -1;
}

QString CheckModel::summaryText() const {
  const PlanSpec* p = plan();
  if (!p) return tr("no plan: select one in the table or open a plan TOML");
  QString text = tr("plan %1: %2, %3 x %4, sp %5 x cp %6")
                     .arg(m_filePath.isEmpty() ? tr("(the selected row)") : m_filePath, stringOf(p->model.name))
                     .arg(p->cluster.num_gpus)
                     .arg(stringOf(p->cluster.gpu.name))
                     .arg(p->knobs.sp)
                     .arg(p->knobs.cp);
  if (m_logs.isEmpty()) return text + tr("; no run log open");
  QStringList logs;
  for (qsizetype i = 0; i < m_logs.size(); ++i) {
    const size_t n = static_cast<size_t>(i);
    logs << m_logs[i] + " (" + (n < m_run.formats.size() ? stringOf(m_run.formats[n]) : QStringLiteral("?")) + ")";
  }
  text += tr("; logs: %1").arg(logs.join(", "));
  if (m_report && m_report->comparisons.empty()) text += tr("\nnothing to compare: the logs hold no memory, step time or tokens/s");
  return text;
}

QString CheckModel::verdictText() const {
  if (!m_report) return {};
  return m_report->as_planned() ? tr("as planned") : tr("the run is not the plan");
}

const ErrorStats& CheckModel::bandOf(const check::Comparison& c) const {
  return c.quantity == "peak_memory" ? m_band.memory : m_band.speed;
}

std::optional<bool> CheckModel::withinBand(int row) const {
  const check::Comparison& c = comparisonAt(row);
  const ErrorStats& band = bandOf(c);
  if (band.count == 0) return std::nullopt;
  return std::fabs(c.error_pct()) <= band.max_abs_pct;
}

std::optional<std::pair<double, double>> CheckModel::bandRange(int row) const {
  const check::Comparison& c = comparisonAt(row);
  const ErrorStats& band = bandOf(c);
  if (band.count == 0) return std::nullopt;
  // error = (predicted - measured) / measured, so |error| <= m holds from predicted / (1 + m) to
  // predicted / (1 - m); a band of 100% or more has no upper end.
  const double m = band.max_abs_pct / 100.0;
  const double upper = m < 1 ? c.predicted / (1 - m) : std::numeric_limits<double>::infinity();
  return std::make_pair(c.predicted / (1 + m), upper);
}

CheckFindingsModel::CheckFindingsModel(const CheckModel* check, QObject* parent)
    : QAbstractTableModel(parent), m_check(check) {}

int CheckFindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !m_check->hasReport() ? 0 : static_cast<int>(m_check->report().findings.size());
}

int CheckFindingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CheckFindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const check::Finding& f = m_check->report().findings.at(static_cast<size_t>(index.row()));
  if (role == NotThePlanRole) return f.not_the_plan;
  if (role == Qt::ForegroundRole && f.not_the_plan) return QColor(0xc0, 0, 0);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case VerdictColumn: return f.not_the_plan ? tr("not the plan") : tr("note");
    case IdColumn: return stringOf(f.id);
    case WordsColumn: return stringOf(f.words);
    case CauseColumn: return stringOf(f.cause);
    default: return {};
  }
}

QVariant CheckFindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  static const char* const kHeaders[ColumnCount] = {"verdict", "finding", "what the logs show", "likely cause"};
  return QString::fromLatin1(kHeaders[section]);
}

}  // namespace spplan::gui
