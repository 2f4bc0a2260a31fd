#include "gui/rent_model.hpp"

#include <QBrush>
#include <QColor>
#include <cmath>
#include <limits>

#include "gui/trust.hpp"

namespace spplan::gui {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

QString knobsText(const Knobs& k) {
  return QStringLiteral("sp %1 · zero %2 · ckpt %3").arg(k.sp).arg(k.zero_stage).arg(QString::fromStdString(to_string(k.act_ckpt)));
}

}  // namespace

RentModel::RentModel(QObject* parent) : QAbstractTableModel(parent) {}

int RentModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_rows.size()); }

int RentModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString RentModel::rowLabel(int row) const {
  const Row& r = m_rows.at(static_cast<size_t>(row));
  return QStringLiteral("%1 %2x%3").arg(QString::fromStdString(r.gpu)).arg(r.nodes).arg(r.gpus / r.nodes);
}

QVariant RentModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const int column = index.column();
  const bool cheapest = index.row() == m_cheapest, fastest = index.row() == m_fastest;
  if (role == Qt::BackgroundRole && (cheapest || fastest)) return QBrush(QColor(0xd6, 0xf0, 0xd6));
  if (role == Qt::ForegroundRole && !r.best && column < VisibleColumnCount) return QBrush(QColor(0xb0, 0x20, 0x20));
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(column >= UsdPerMtokColumn && column <= MaxSeqColumn ? Qt::AlignRight | Qt::AlignVCenter
                                                                                    : Qt::AlignLeft | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != ValueRole) return {};
  const bool text = role == Qt::DisplayRole;
  const costmodel::Estimate* e = r.best ? &r.best->estimate : nullptr;
  const auto number = [&](double value, int decimals) -> QVariant {
    if (!e) return text ? QVariant(tr("no fit")) : QVariant(kNan);
    return text ? QVariant(QString::number(value, 'f', decimals)) : QVariant(value);
  };
  switch (column) {
    case GpuColumn: return QString::fromStdString(r.gpu);
    case NodesColumn: return static_cast<qlonglong>(r.nodes);
    case GpusColumn: return static_cast<qlonglong>(r.gpus);
    case UsdPerMtokColumn: return number(e ? e->usd_per_million_tokens : 0, 3);
    case StepSecondsColumn: return number(e ? e->time.step_time_s : 0, 3);
    case TokensPerSecondColumn: return number(e ? e->tokens_per_s : 0, 0);
    case MaxSeqColumn:
      if (text) return r.max_seq > 0 ? QString::number(r.max_seq / 1024) + "k" : tr("none");
      return static_cast<qlonglong>(r.max_seq);
    case KnobsColumn: return e ? knobsText(r.best->plan.knobs) : QString();
    case TrustColumn: return m_trust ? m_trust->shortText(r.gpu) : QString();
    case MarkColumn: {
      QStringList marks;
      if (cheapest) marks << tr("cheapest");
      if (fastest) marks << tr("fastest");
      return marks.join(", ");
    }
    case ChartUsdPerMtokColumn: return e ? e->usd_per_million_tokens : 0.0;
    case ChartStepSecondsColumn: return e ? e->time.step_time_s : 0.0;
    case ChartMaxSeqKiloColumn: return static_cast<double>(r.max_seq) / 1024.0;
    default: return {};
  }
}

QVariant RentModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"GPU", "nodes", "GPUs", "$/Mtok", "step s", "tokens/s",
                                                    "max seq", "best knobs", "measured error", "", "$/Mtok", "step s", "max seq k"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

void RentModel::setBase(const PlanSpec& base) {
  search::RentTable table = search::rent_options(base);
  beginResetModel();
  m_rows = std::move(table.options);
  m_cheapest = table.cheapest;
  m_fastest = table.fastest;
  endResetModel();
}

void RentModel::clear() {
  beginResetModel();
  m_rows.clear();
  m_cheapest = m_fastest = -1;
  endResetModel();
}

}  // namespace spplan::gui
