#include "gui/seq_sweep_model.hpp"

#include <algorithm>

#include "planner/core/units.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::gui {

SeqSweepModel::SeqSweepModel(QObject* parent) : QAbstractTableModel(parent) {}

int SeqSweepModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_points.size());
}

int SeqSweepModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SeqSweepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role != Qt::DisplayRole) return {};
  const Point& p = m_points[static_cast<size_t>(index.row())];
  switch (index.column()) {
    case SeqKiloColumn: return p.seqTokens / 1024.0;
    case PeakGibColumn: return gib(p.peakBytes);
    case CapacityGibColumn: return gib(p.capacityBytes);
    case FitsColumn: return p.fits;
    case SeqMegaColumn: return p.seqTokens / (1024.0 * 1024.0);
    default: return {};
  }
}

QVariant SeqSweepModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
    case SeqKiloColumn: return QStringLiteral("seq (k tokens)");
    case PeakGibColumn: return QStringLiteral("peak GiB");
    case CapacityGibColumn: return QStringLiteral("capacity GiB");
    case FitsColumn: return QStringLiteral("fits");
    case SeqMegaColumn: return QStringLiteral("seq (M tokens)");
    default: return {};
  }
}

void SeqSweepModel::setPlan(const PlanSpec& plan) {
  std::vector<Point> points;
  for (int64_t seq = std::max<int64_t>(1, plan.seq_len / 8); seq <= 4 * plan.seq_len; seq *= 2) {
    PlanSpec at = plan;
    at.seq_len = seq;
    const costmodel::Estimate e = costmodel::estimate(at);
    points.push_back({static_cast<double>(seq), e.memory.needed_bytes(), e.capacity_bytes, e.fits});
  }
  beginResetModel();
  m_points = std::move(points);
  endResetModel();
}

void SeqSweepModel::clear() {
  beginResetModel();
  m_points.clear();
  endResetModel();
}

}  // namespace spplan::gui
