#include "gui/run_step_model.hpp"

#include "planner/core/units.hpp"

namespace spplan::gui {

RunStepModel::RunStepModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunStepModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_steps.size()); }

int RunStepModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunStepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role != Qt::DisplayRole) return {};  // numbers: the chart's mappers read DisplayRole
  const StepProgress& s = m_steps[static_cast<size_t>(index.row())];
  switch (index.column()) {
    case StepColumn: return static_cast<qlonglong>(s.step);
    case LossColumn: return s.loss;
    case StepSecondsColumn: return s.stepTimeS;
    case TokensPerSecondColumn: return s.tokensPerS;
    case PeakMibColumn: return s.peakMemoryBytes / kMiB;
    default: return {};
  }
}

QVariant RunStepModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"step", "loss", "step s", "tokens/s", "peak MiB"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

void RunStepModel::append(const StepProgress& step) {
  const int row = rowCount();
  beginInsertRows({}, row, row);
  m_steps.push_back(step);
  endInsertRows();
}

void RunStepModel::clear() {
  beginResetModel();
  m_steps.clear();
  endResetModel();
}

}  // namespace spplan::gui
