#include "gui/plan_table_model.hpp"

#include "gui/rent_model.hpp"  // significantText

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "planner/config/plan_rules.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/knob_constraints.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {
namespace {

constexpr size_t kClosestShown = 10;  // failing plans listed when none fits

QString tiledText(const Knobs& k) {
  if (k.tiled_mlp && k.tiled_loss) return QStringLiteral("mlp+loss");
  if (k.tiled_mlp) return QStringLiteral("mlp");
  if (k.tiled_loss) return QStringLiteral("loss");
  return QStringLiteral("none");
}

double memoryGib(const costmodel::Estimate& e, int column) {
  const auto& m = e.memory;
  switch (column) {
    case PlanTableModel::ParamsGibColumn: return gib(m.params_bytes);
    case PlanTableModel::GradsGibColumn: return gib(m.grads_bytes);
    case PlanTableModel::OptimizerGibColumn: return gib(m.optimizer_bytes);
    case PlanTableModel::ActivationsGibColumn: return gib(m.activations_bytes);
    case PlanTableModel::LogitsGibColumn: return gib(m.logits_bytes);
    case PlanTableModel::BuffersGibColumn: return gib(m.buffers_bytes);
    // What fits is judged on: the allocator slack given back near the limit is not needed.
    case PlanTableModel::OverheadGibColumn: return gib(m.overhead_bytes - m.slack_given_back_bytes);
    case PlanTableModel::CapacityGibColumn: return gib(e.capacity_bytes);
    default: return 0;
  }
}

}  // namespace

QString dollarsText(double usd) {
  return usd < 100 ? QStringLiteral("$") + QString::number(usd, 'f', 2) : QStringLiteral("$") + QString::fromStdString(count_text(usd));
}

QString hostMemoryText(const costmodel::Estimate& e) {
  QString text = QString::number(gib(e.host.total_bytes()), 'f', 0) + " / " + QString::number(gib(e.host_capacity_bytes), 'f', 0);
  if (e.host.nvme_bytes > 0) text += " + " + QString::fromStdString(count_text(gib(e.host.nvme_bytes))) + " NVMe";
  return text;
}

QString hostMemoryDetail(const costmodel::Estimate& e) {
  const auto gb = [](double bytes) { return QString::number(gib(bytes), 'f', 1); };
  QString text = QObject::tr("Host memory per node: %1 of %2 GiB usable (optimizer state %3, parameters %4, "
                             "checkpoints %5)")
                     .arg(gb(e.host.total_bytes()), QString::number(gib(e.host_capacity_bytes), 'f', 0),
                          gb(e.host.optimizer_bytes), gb(e.host.params_bytes), gb(e.host.activations_bytes));
  if (e.host.nvme_bytes > 0) {
    text += QObject::tr("; NVMe per node: %1 GiB (what ZeRO-Infinity swaps to the drives)").arg(gb(e.host.nvme_bytes));
  }
  return text;
}

PlanTableModel::PlanTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto& row = m_rows[static_cast<size_t>(index.row())];
  const Knobs& k = row.plan.knobs;
  const costmodel::Estimate& e = row.estimate;
  const int column = index.column();
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(column >= PeakGibColumn ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignCenter);
  }
  if (role == Qt::ForegroundRole && !e.fits) return QBrush(QColor(0xb0, 0x20, 0x20));
  // Risky rows amber in their group cell, as the banner of a plan inside the measured error.
  if (role == Qt::BackgroundRole && column == GroupColumn && e.fits && !search::is_safe(row)) {
    return QBrush(QColor(0xff, 0xf1, 0xb8));
  }
  if (role == Qt::ToolTipRole && column == GroupColumn && e.fits) {
    return tr("%1 GPU memory free, against %2")
        .arg(QString::number(e.free_memory_pct(), 'f', 1) + "%", QString::fromStdString(search::held_against_words(row.plan)));
  }
  if (role == Qt::ToolTipRole && !e.fits) return QString::fromStdString(e.reason());
  if (role != Qt::DisplayRole && role != ValueRole) return {};
  const bool text = role == Qt::DisplayRole;
  switch (column) {
    case RankColumn:
      if (!e.fits) return text ? QVariant(QStringLiteral("no fit")) : QVariant(0);
      return static_cast<qlonglong>(m_places[static_cast<size_t>(index.row())] + 1);
    case GroupColumn:  // safe first: the ranking's groups (search::is_safe)
      if (!e.fits) return text ? QVariant(QString()) : QVariant(2);
      return text ? QVariant(QString::fromLatin1(search::group_name(row))) : QVariant(search::is_safe(row) ? 0 : 1);
    case SpColumn: return static_cast<qlonglong>(k.sp);
    case CpColumn:  // the ring degree, with its variant when it is not the ring
      if (text && k.cp > 1 && k.cp_comm == CpComm::kAllGather) return QString::number(k.cp) + QStringLiteral(" ag");
      return static_cast<qlonglong>(k.cp);
    case ZeroColumn: return static_cast<qlonglong>(k.zero_stage);
    case OffloadOptimizerColumn: return QString::fromStdString(to_string(k.offload_optimizer));
    case OffloadParamsColumn: return QString::fromStdString(to_string(k.offload_params));
    case CkptColumn: return QString::fromStdString(to_string(k.act_ckpt));
    case TiledColumn: return tiledText(k);
    case MicroBatchColumn: return static_cast<qlonglong>(k.micro_batch);
    case PeakGibColumn:
      return text ? QVariant(QString::number(gib(e.memory.needed_bytes()), 'f', 1)) : QVariant(gib(e.memory.needed_bytes()));
    case HostGibColumn:  // per node: what renting decides as often as the GPUs' own memory
      return text ? QVariant(hostMemoryText(e)) : QVariant(gib(e.host.total_bytes()));
    case StepSecondsColumn:  // "5.058 s", "8 min 38 s": read as a person reads a duration
      return text ? QVariant(e.time.step_time_s < 60 ? QString::number(e.time.step_time_s, 'f', 3) + " s"
                                                    : QString::fromStdString(duration_text(e.time.step_time_s)))
                  : QVariant(e.time.step_time_s);
    case TokensPerSecondColumn:  // 6,332: the status line's format (one number format across a screen)
      return text ? QVariant(QString::fromStdString(count_text(e.tokens_per_s))) : QVariant(e.tokens_per_s);
    case MfuColumn: return text ? QVariant(QString::number(100 * e.mfu, 'f', 1) + "%") : QVariant(e.mfu);
    case UsdPerMtokColumn:
      return text ? QVariant(significantText(e.usd_per_million_tokens, 3)) : QVariant(e.usd_per_million_tokens);
    // The CLI's formats (cli/cmd_plan.cpp print_table): whole tokens, a duration, dollars.
    case RealTokensPerSecondColumn:
      return text ? QVariant(QString::fromStdString(count_text(e.real_tokens_per_s))) : QVariant(e.real_tokens_per_s);
    case EpochColumn: return text ? QVariant(QString::fromStdString(duration_text(e.epoch_s))) : QVariant(e.epoch_s);
    case UsdPerEpochColumn: return text ? QVariant(dollarsText(e.usd_per_epoch)) : QVariant(e.usd_per_epoch);
    default:
      return memoryGib(e, column);  // numbers in both roles: the chart mappers read DisplayRole
  }
}

QString PlanTableModel::headerToolTip(int section) {
  switch (section) {
    case RankColumn:  // the rule `spplan plan` states under its table
      return tr("Rank among the plans that fit: %1")
          .arg(QString::fromStdString(search::ranking_rule(search::Ranking::kSafeFirst)));
    case GroupColumn:
      return tr("safe: more GPU memory free than the largest memory error measured for the trainer on the GPU (%1% "
                "where none was measured); risky: inside it, so it may not fit when it runs. Safe plans rank first "
                "unless \"speed alone\" (--risky) is on")
          .arg(search::kUnmeasuredHeadroomPct, 0, 'f', 0);
    case SpColumn: return tr("Ulysses sequence-parallel degree: GPUs that split each sequence");
    case CpColumn: return tr("Ring-attention (context-parallel) degree: GPUs that pass K/V chunks around a ring; "
                             "GPUs = data parallel × sp × cp");
    case ZeroColumn: return tr("DeepSpeed ZeRO stage: 0 replicates, 1 shards optimizer state, 2 also gradients, 3 also parameters");
    case OffloadOptimizerColumn: return tr("Where the optimizer state lives: the GPU (none), host RAM (cpu) or NVMe");
    case OffloadParamsColumn: return tr("Where the ZeRO-3 parameter shards live: the GPU (none), host RAM (cpu) or NVMe");
    case CkptColumn: return tr("Activation checkpointing: none, full (recompute each layer in backward), offload "
                               "(checkpoints kept in host RAM)");
    case TiledColumn: return tr("ALST tiling: tiled MLP and tiled loss compute in sequence chunks to cut the activation "
                                "and logits peaks");
    case MicroBatchColumn: return tr("Sequences per GPU group per micro step");
    case PeakGibColumn:
      return tr("Predicted peak GPU memory per GPU, overheads included, against the capacity (what the step needs: on the "
                "engine, the allocator slack it gives back near the limit is not counted)");
    case HostGibColumn: return tr("Predicted host (CPU) memory per node, of what the plan may use of its RAM (the rest "
                                  "is the OS's): offloaded states, pinned buffers, checkpoints; + the NVMe per node "
                                  "when ZeRO-Infinity swaps there");
    case StepSecondsColumn: return tr("Predicted seconds per optimizer step, with communication overlap");
    case TokensPerSecondColumn: return tr("Predicted trained tokens per second, whole cluster");
    case MfuColumn: return tr("Model FLOPs utilisation: model FLOPs (no recompute) / (GPUs × bf16 peak × step time)");
    case UsdPerMtokColumn: return tr("US dollars per million trained tokens at the GPU's list price");
    case RealTokensPerSecondColumn:
      return tr("Predicted tokens per second of the corpus's documents, whole cluster: the padding the packing leaves "
                "not counted");
    case EpochColumn: return tr("Predicted time of one epoch: the optimizer steps the packed corpus's sequences take");
    case UsdPerEpochColumn: return tr("US dollars per epoch at the GPU's list price (or the price typed)");
    case OverheadGibColumn: return tr("Memory the framework does not see: CUDA context, NCCL buffers, GEMM workspaces, "
                                      "allocator fragmentation");
    default: return {};
  }
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal) return headerToolTip(section);
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {
      "rank", "group", "sp", "cp", "zero", "offload\noptimizer", "offload\nparams", "act\nckpt", "tiled", "micro\nbatch", "peak\nGiB",
      "host GiB\nper node", "step", "tokens/s", "MFU", "$/Mtok", "real\ntokens/s", "epoch", "$/epoch", "params", "grads", "optimizer", "activations", "logits",
      "buffers", "overhead", "capacity"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

void PlanTableModel::setBase(const PlanSpec& base, const search::KnobConstraints& constraints) {
  search::SearchResult result = search::search_plans(base, true, constraints);
  m_whyNone = result.evaluated == 0 ? QString::fromStdString(search::no_candidate_status(result, base).message()) : QString();
  m_layoutReason = QString::fromStdString(search::layout_reason(result));
  m_riskyNote.clear();
  if (const search::RankedPlan* risky = search::fastest_risky_beyond_best_safe(result.feasible);
      risky != nullptr && constraints.ranking == search::Ranking::kSafeFirst) {
    m_riskyNote = QString::fromStdString(search::risky_beside_safe_words(*risky, result.feasible.front()));
  }
  beginResetModel();
  m_hasCorpus = !base.documents.empty();
  m_evaluated = static_cast<int>(result.evaluated);
  m_fitCount = static_cast<int>(result.feasible.size());
  m_rows = std::move(result.feasible);
  if (m_rows.empty()) {
    // Re-estimate the failures to show how close each came (the search keeps only the reason).
    for (const auto& rejected : result.rejected) {
      PlanSpec plan = base;
      plan.knobs = rejected.knobs;
      if (!check_plan(plan, flag_where)) continue;  // estimate() requires a valid plan
      m_rows.push_back({plan, costmodel::estimate(plan)});
    }
    std::sort(m_rows.begin(), m_rows.end(),
              [](const auto& a, const auto& b) { return a.estimate.over_limit() < b.estimate.over_limit(); });
    if (m_rows.size() > kClosestShown) m_rows.resize(kClosestShown);
  }
  m_places.resize(m_rows.size());
  for (size_t r = 0; r < m_rows.size(); ++r) m_places[r] = r;
  applySort();
  endResetModel();
}

void PlanTableModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= VisibleColumnCount) return;
  m_sortColumn = column;
  m_sortOrder = order;
  Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
  const std::vector<size_t> placesBefore = m_places;
  const QModelIndexList persistent = persistentIndexList();
  applySort();
  // Each persistent index (the view's selection) follows its plan to its new row.
  std::vector<int> rowOfPlace(m_places.size());
  for (size_t r = 0; r < m_places.size(); ++r) rowOfPlace[m_places[r]] = static_cast<int>(r);
  QModelIndexList moved;
  for (const QModelIndex& index : persistent) {
    moved.push_back(this->index(rowOfPlace[placesBefore[static_cast<size_t>(index.row())]], index.column()));
  }
  changePersistentIndexList(persistent, moved);
  Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void PlanTableModel::applySort() {
  std::vector<size_t> order(m_rows.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = r;
  // The search's order first, so equal keys keep it in either direction.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m_places[a] < m_places[b]; });
  // Each row's key in the sort column, read once (a re-plan sorts thousands of rows): its number,
  // or for text columns (offloads, tiling) its words.
  std::vector<QVariant> keys(m_rows.size());
  for (size_t r = 0; r < keys.size(); ++r) keys[r] = data(index(static_cast<int>(r), m_sortColumn), ValueRole);
  const bool numeric = !keys.empty() && keys[0].canConvert<double>() && keys[0].typeId() != QMetaType::QString;
  const auto less = [&](size_t a, size_t b) {
    return numeric ? keys[a].toDouble() < keys[b].toDouble() : keys[a].toString() < keys[b].toString();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return m_sortOrder == Qt::AscendingOrder ? less(a, b) : less(b, a); });
  std::vector<search::RankedPlan> rows;
  std::vector<size_t> places;
  for (size_t r : order) {
    rows.push_back(std::move(m_rows[r]));
    places.push_back(m_places[r]);
  }
  m_rows = std::move(rows);
  m_places = std::move(places);
}

void PlanTableModel::clear() {
  beginResetModel();
  m_rows.clear();
  m_hasCorpus = false;
  m_fitCount = 0;
  m_evaluated = 0;
  m_whyNone.clear();
  m_layoutReason.clear();
  m_riskyNote.clear();
  endResetModel();
}

}  // namespace spplan::gui
