#include "gui/rent_model.hpp"

#include <QBrush>
#include <QColor>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/plan_table_model.hpp"  // hostMemoryText
#include "gui/trust.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

QString knobsText(const Knobs& k) {
  return QStringLiteral("sp %1 · zero %2 · ckpt %3").arg(k.sp).arg(k.zero_stage).arg(QString::fromStdString(to_string(k.act_ckpt)));
}

}  // namespace

QString significantText(double value, int digits) {
  if (!std::isfinite(value)) return QStringLiteral("n/a");
  if (value == 0) return QStringLiteral("0");
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(digits - 1 - magnitude, 0, 12);
  return QString::number(value, 'f', decimals);
}

RentModel::RentModel(QObject* parent) : QAbstractTableModel(parent) {
  connect(&m_watcher, &QFutureWatcher<search::RentTable>::finished, this, &RentModel::onPriced);
}

RentModel::~RentModel() { m_watcher.waitForFinished(); }  // no worker outlives the model

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
  // A risky best plan amber in its group cell, as in the plan table.
  if (role == Qt::BackgroundRole && column == GroupColumn && r.best && !search::is_safe(*r.best)) {
    return QBrush(QColor(0xff, 0xf1, 0xb8));
  }
  // Cheapest green, fastest blue: a renter tells them apart at a glance.
  if (role == Qt::BackgroundRole && cheapest) return QBrush(QColor(0xd6, 0xf0, 0xd6));
  if (role == Qt::BackgroundRole && fastest) return QBrush(QColor(0xd6, 0xe4, 0xf5));
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
    case UsdPerMtokColumn:  // three significant digits: a small model's $0.000412 is not "0.000"
      if (e && text) return significantText(e->usd_per_million_tokens, 3);
      return number(e ? e->usd_per_million_tokens : 0, 3);
    case StepSecondsColumn:  // "11 h 35 min", as the plan table, not a count of seconds
      if (e && text) return QString::fromStdString(duration_text(e->time.step_time_s));
      return number(e ? e->time.step_time_s : 0, 3);
    case TokensPerSecondColumn:  // 12,716: separators as on the rest of the screen
      if (e && text) return QString::fromStdString(count_text(e->tokens_per_s));
      return number(e ? e->tokens_per_s : 0, 0);
    case HostGibColumn:  // per node, of what the plan may use of its RAM
      if (e && text) return hostMemoryText(*e);
      return number(e ? gib(e->host.total_bytes()) : 0, 0);
    case MaxSeqColumn:
      if (text) return r.max_seq > 0 ? QString::fromStdString(seq_text(r.max_seq)) + maxSeqMargin(r.measured_as) : tr("none");
      return static_cast<qlonglong>(r.max_seq);
    case KnobsColumn: return e ? knobsText(r.best->plan.knobs) : QString();
    case GroupColumn:  // the best plan's group: a risky one is all this option has (or --risky chose it)
      if (!r.best) return text ? QVariant(QString()) : QVariant(2);
      return text ? QVariant(QString::fromLatin1(search::group_name(*r.best))) : QVariant(search::is_safe(*r.best) ? 0 : 1);
    case TrustColumn: return m_trust ? m_trust->shortText(r.measured_as) : QString();
    case MarkColumn: {
      QStringList marks;
      if (r.own) marks << tr("your GPUs");
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

QString RentModel::maxSeqMargin(const std::string& gpu) const {
  if (!m_trust) return {};
  const ErrorStats& memory = m_trust->forGpu(gpu).memory;
  return memory.count > 0 ? QStringLiteral(" ±%1%").arg(memory.mean_abs_pct, 0, 'f', 0) : QString();
}

QString RentModel::headerToolTip(int section) {
  switch (section) {
    case GpuColumn: return tr("The GPU preset (configs/gpus/), or your own GPU for the row marked \"your GPUs\"");
    case NodesColumn: return tr("Nodes of the preset's GPUs per node");
    case GpusColumn: return tr("GPUs in all: nodes × GPUs per node (your own count on the \"your GPUs\" row)");
    case UsdPerMtokColumn: return tr("US dollars per million trained tokens: GPUs × price per GPU-hour / tokens per second, "
                                     "for the best plan at this sequence length");
    case StepSecondsColumn: return tr("Predicted seconds per optimizer step of the best plan");
    case TokensPerSecondColumn: return tr("Predicted tokens per second, whole cluster, of the best plan");
    case HostGibColumn: return tr("Host (CPU) memory per node the best plan needs, of what it may use of the node's RAM");
    case MaxSeqColumn: return tr("The longest sequence that fits with ANY knobs (spplan max-seq: the knobs are searched), "
                                 "± the planner's measured memory error on this GPU (max-seq is where predicted memory "
                                 "meets capacity, so its margin is about that error). The banner's max-seq is for the "
                                 "selected plan's own knobs, so it can be shorter.");
    case KnobsColumn: return tr("The best plan's knobs: Ulysses degree, ZeRO stage, activation checkpointing");
    case GroupColumn: return tr("The best plan's group: safe leaves more GPU memory free than the largest memory error "
                                "measured for the trainer on this GPU (%1% where none was measured); risky is inside it "
                                "and may not fit when it runs. Cheapest and fastest are marked among safe rows first")
                                 .arg(search::kUnmeasuredHeadroomPct, 0, 'f', 0);
    case TrustColumn: return tr("The planner's measured error on this GPU (validation/results): memory, speed");
    case MarkColumn: return tr("Your GPUs, the cheapest ($/Mtok, green) and the fastest (tokens/s, blue) rows");
    default: return {};
  }
}

QVariant RentModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role == Qt::ToolTipRole && orientation == Qt::Horizontal) return headerToolTip(section);
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kHeaders[ColumnCount] = {"GPU", "nodes", "GPUs", "group", "$/Mtok", "step", "tokens/s",
                                                    "host GiB\nper node", "max seq (any knobs)", "best knobs", "measured error", "mark", "$/Mtok",
                                                    "step s", "max seq k"};
  if (section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

RentModel::Request RentModel::request(const PlanSpec& base, const search::KnobConstraints& constraints) const {
  return {base, constraints, m_trust ? std::optional<MeasuredAccuracy>(m_trust->measured()) : std::nullopt};
}

search::RentTable RentModel::price(const Request& request) {
  search::RentShapes shapes;
  shapes.accuracy = request.accuracy ? &*request.accuracy : nullptr;  // each preset ranked against its own error
  return search::rent_options_with_own(request.base, request.constraints, shapes);
}

void RentModel::show(search::RentTable table) {
  beginResetModel();
  m_rows = std::move(table.options);
  m_cheapest = table.cheapest;
  m_fastest = table.fastest;
  endResetModel();
  Q_EMIT priced();
}

void RentModel::setBase(const PlanSpec& base, const search::KnobConstraints& constraints) {
  finishPricing();  // a pricing still running would replace these rows when it ends
  show(price(request(base, constraints)));
}

void RentModel::setBaseAsync(const PlanSpec& base, const search::KnobConstraints& constraints) {
  if (isPricing()) {
    m_next = request(base, constraints);
    return;
  }
  startPricing(request(base, constraints));
}

void RentModel::startPricing(Request request) {
  m_shown = false;
  m_watcher.setFuture(QtConcurrent::run([request = std::move(request)] { return price(request); }));
  Q_EMIT pricingStarted();
}

void RentModel::showPricedOrNext() {
  if (m_next) {  // asked again meanwhile: this result is already stale
    Request next = std::move(*m_next);
    m_next.reset();
    startPricing(std::move(next));
    return;
  }
  m_shown = true;
  show(m_watcher.result());
}

void RentModel::onPriced() {
  if (!m_shown) showPricedOrNext();  // else finishPricing showed it already
}

void RentModel::finishPricing() {
  while (!m_shown) {
    m_watcher.waitForFinished();
    showPricedOrNext();
  }
}

void RentModel::clear() {
  finishPricing();
  beginResetModel();
  m_rows.clear();
  m_cheapest = m_fastest = -1;
  endResetModel();
}

}  // namespace spplan::gui
