#include "gui/sp_scaling_model.hpp"

#include <QColor>
#include <algorithm>
#include <optional>

#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {

const char* SpScalingModel::layoutName(Layout layout) {
  switch (layout) {
    case Ulysses: return "Ulysses";
    case Ring: return "ring";
    case Hybrid: return "Ulysses x ring";
    case LayoutCount: break;
  }
  return "";
}

namespace {

// The plan at degrees (sp, cp) on the first trainer that runs it: the plan's own, else the Hugging
// Face Trainer (a ring alone, through Accelerate), else spplan-engine (every layout); nullopt when
// none does (e.g. ZeRO-3 without checkpointing past Accelerate's ring, which the engine refuses).
// Each runs the attention kernel its layout runs on that trainer (hf's ring: SDPA), as the CLI's
// estimate of the plan does, unless the user named one; on the plan's own trainer, the plan's kernel
// wherever the layout runs it too (the search may have kept another than the layout's default:
// SDPA under hf's Ulysses on an H100), so the chart at the plan's degrees is the plan's row. The
// encoders stay as the plan holds them (frozen or trained): the same model trained at every degree,
// whichever trainer runs it.
std::optional<PlanSpec> runnable_at(const PlanSpec& plan, int64_t sp, int64_t cp) {
  PlanSpec at = plan;
  at.knobs.sp = sp;
  at.knobs.cp = cp;
  for (const char* trainer : {"", "hf", "engine"}) {
    if (*trainer != 0) {
      at.stack = trainer_stack(trainer);
      at.stack.freezes_encoders = plan.stack.freezes_encoders;
    }
    settle_layout_attention(&at);
    const std::vector<AttentionKernel> runs = searched_attention(at);
    if (*trainer == 0 && std::find(runs.begin(), runs.end(), plan.stack.attention) != runs.end()) {
      at.stack.attention = plan.stack.attention;
    }
    if (check_plan(at, flag_where)) return at;  // estimate() requires a valid plan
  }
  return std::nullopt;
}

}  // namespace

SpScalingModel::SpScalingModel(QObject* parent) : QAbstractTableModel(parent) {}

int SpScalingModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_rows.size()); }

int SpScalingModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SpScalingModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const costmodel::Estimate& e = r.estimate;
  if (role == Qt::ForegroundRole && !e.fits) return QColor(0xb0, 0x20, 0x20);  // over capacity, as the Memory tab
  if (role == Qt::ToolTipRole && !e.fits) return QString::fromStdString(e.reason());
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(index.column() == LayoutColumn || index.column() == TrainerColumn ||
                                       index.column() == FitsColumn
                                   ? Qt::AlignLeft | Qt::AlignVCenter
                                   : Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != ValueRole) return {};
  const bool text = role == Qt::DisplayRole;
  // One number format across the GUI and the CLI (planner/core parse.hpp), not the system locale's.
  const auto number = [text](double v, int decimals) {
    return text ? QVariant(QString::number(v, 'f', decimals)) : QVariant(v);
  };
  switch (index.column()) {
    case LayoutColumn: return tr(layoutName(r.layout));
    case TrainerColumn: return QString::fromStdString(r.plan.stack.trainer);
    case SpColumn: return static_cast<qlonglong>(r.sp);
    case CpColumn: return static_cast<qlonglong>(r.cp);
    case DegreeColumn: return static_cast<qlonglong>(r.sp * r.cp);
    case TokensPerSecondColumn:
      return text ? QVariant(QString::fromStdString(count_text(e.tokens_per_s))) : QVariant(e.tokens_per_s);
    case PeakGibColumn: return number(gib(e.memory.needed_bytes()), 1);
    case CapacityGibColumn: return number(gib(e.capacity_bytes), 1);
    case StepSecondsColumn:  // "8 h 53 min", as the plan table, not a count of seconds
      return text ? QVariant(QString::fromStdString(duration_text(e.time.step_time_s))) : QVariant(e.time.step_time_s);
    case FitsColumn:
      if (!text) return e.fits;
      return e.fits ? tr("yes") : tr("no");  // the reason is the row's tooltip: the table stays narrow
    default: return {};
  }
}

QVariant SpScalingModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"layout", "trainer", "sp", "cp", "sp x cp", "tokens/s", "peak GiB",
                                                    "capacity GiB", "step", "fits"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

int SpScalingModel::firstRow(Layout layout) const {
  const auto it = std::find_if(m_rows.begin(), m_rows.end(), [&](const Row& r) { return r.layout == layout; });
  return static_cast<int>(it - m_rows.begin());
}

int SpScalingModel::rowCountOf(Layout layout) const {
  return static_cast<int>(std::count_if(m_rows.begin(), m_rows.end(), [&](const Row& r) { return r.layout == layout; }));
}

void SpScalingModel::setPlan(const PlanSpec& plan) {
  std::vector<Row> rows;
  const auto add = [&](Layout layout, int64_t sp, int64_t cp) {
    const std::optional<PlanSpec> at = runnable_at(plan, sp, cp);
    if (!at) return;  // no trainer runs these knobs at this layout (or a plan rule breaks there)
    costmodel::Estimate e = costmodel::estimate(*at);
    rows.push_back({layout, sp, cp, *at, std::move(e)});
  };
  const int64_t gpus = plan.cluster.num_gpus;
  const std::vector<int64_t> sps = valid_sp_degrees(plan.model, gpus);
  for (const int64_t sp : sps) add(Ulysses, sp, 1);
  for (const int64_t cp : valid_cp_degrees(gpus, 1)) {
    if (cp > 1) add(Ring, 1, cp);  // degree 1 is the Ulysses row already
  }
  // The hybrid: Ulysses on the largest degree that stays inside a node, the ring across.
  int64_t node_sp = 1;
  for (const int64_t sp : sps) {
    if (sp <= plan.cluster.gpus_per_node() && sp > 1) node_sp = sp;
  }
  if (node_sp > 1) {
    for (const int64_t cp : valid_cp_degrees(gpus, node_sp)) {
      if (cp > 1) add(Hybrid, node_sp, cp);
    }
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
