#include "gui/sp_scaling_model.hpp"

#include "planner/config/plan_rules.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {

SpScalingModel::SpScalingModel(QObject* parent) : QAbstractTableModel(parent) {}

int SpScalingModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_rows.size()); }

int SpScalingModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SpScalingModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role != Qt::DisplayRole) return {};  // numbers in DisplayRole: the chart's mappers read it
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const costmodel::Estimate& e = r.estimate;
  switch (index.column()) {
    case SpColumn: return static_cast<qlonglong>(r.sp);
    case TokensPerSecondColumn: return e.tokens_per_s;
    case PeakGibColumn: return gib(e.memory.total_bytes());
    case CapacityGibColumn: return gib(e.capacity_bytes);
    case StepSecondsColumn: return e.time.step_time_s;
    case FitsColumn: return e.fits ? tr("yes") : QString::fromStdString(e.reason());
    default: return {};
  }
}

QVariant SpScalingModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"sp", "tokens/s", "peak GiB", "capacity GiB", "step s", "fits"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

void SpScalingModel::setPlan(const PlanSpec& plan) {
  std::vector<Row> rows;
  for (const int64_t sp : valid_sp_degrees(plan.model, plan.cluster.num_gpus)) {
    PlanSpec at = plan;
    at.knobs.sp = sp;
    if (!check_plan(at, flag_where)) continue;  // estimate() requires a valid plan
    rows.push_back({sp, costmodel::estimate(at)});
  }
  beginResetModel();
  m_rows = std::move(rows);
  endResetModel();
}

void SpScalingModel::clear() {
  beginResetModel();
  m_rows.clear();
  endResetModel();
}

}  // namespace spplan::gui
