// PlanTableModel: the ranked plans of one search, one row per plan. The single source of numbers
// for the plan table (visible columns) and the memory chart (the hidden GiB-by-category columns,
// read through a QVBarModelMapper); with a corpus, its real tokens/s and epoch. When nothing fits, the rows are the closest failing plans.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "planner/search/search.hpp"

namespace spplan::gui {

// "$21.12", "$1,234": cli/report.cpp dollars_text's format, which the GUI cannot link (it builds on
// the libraries only), so that the table, the banner and the CLI print one price alike.
QString dollarsText(double usd);
// A plan's host memory per node against what it may use of the RAM, and the NVMe it fills when it
// swaps there: "412 / 1710", "96 / 1710 + 1,530 NVMe" (GiB). The plan table's and What to rent's.
QString hostMemoryText(const costmodel::Estimate& e);
// The Memory tab's line: host memory per node by what holds it, and the NVMe per node.
QString hostMemoryDetail(const costmodel::Estimate& e);

class PlanTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RankColumn, GroupColumn, SpColumn, CpColumn, ZeroColumn, OffloadOptimizerColumn, OffloadParamsColumn, CkptColumn,
    TiledColumn, MicroBatchColumn, PeakGibColumn, HostGibColumn, StepSecondsColumn, TokensPerSecondColumn,
    MfuColumn, UsdPerMtokColumn,
    // With a corpus (the base's documents) MainWindow shows these in place of tokens/s and $/Mtok,
    // as `spplan plan --lengths` does: real (non-padding) tokens/s, an epoch's time and its price.
    RealTokensPerSecondColumn, EpochColumn, UsdPerEpochColumn,
    // Hidden in the table; the memory chart maps them (contiguous, in this order).
    ParamsGibColumn, GradsGibColumn, OptimizerGibColumn, ActivationsGibColumn, LogitsGibColumn,
    BuffersGibColumn, OverheadGibColumn, CapacityGibColumn,
    ColumnCount
  };
  static constexpr int VisibleColumnCount = ParamsGibColumn;
  static constexpr int FirstMemoryColumn = ParamsGibColumn;
  static constexpr int LastMemoryColumn = OverheadGibColumn;

  // Qt::UserRole: the unrounded number in the column's unit (tokens/s, s, GiB, fraction), for
  // tests and anything that computes; DisplayRole is the formatted text.
  static constexpr int ValueRole = Qt::UserRole;

  explicit PlanTableModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  // What each column means (the header's tooltip); "" for the chart's hidden columns without one.
  static QString headerToolTip(int section);

  // Orders the rows by a column (the view's header click): numbers by their value, text by its
  // words; equal keys keep the ranking's order, and the rank column keeps each plan's rank. The
  // order holds across setBase until another column is chosen; selections follow their plan.
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

  // Runs search_plans(base) and replaces every row.
  void setBase(const PlanSpec& base, const search::KnobConstraints& constraints = {});
  // Why the last search priced no knob set (evaluated() == 0): the CLI's message
  // (search::no_candidate_status); "" otherwise.
  const QString& whyNone() const { return m_whyNone; }
  // Why the leading plan's layout won, against the best of each other layout (search::layout_reason);
  // "" when nothing fits.
  const QString& layoutReason() const { return m_layoutReason; }
  // Beside a safe row 1, the fastest risky plan when it is faster (search::risky_beside_safe_words:
  // "24% faster than the best safe plan, 0.4% free against a 14.8% measured error"); "" otherwise.
  const QString& riskyNote() const { return m_riskyNote; }
  void clear();

  // Whether the last search's base held a corpus's documents (the epoch columns mean something).
  bool hasCorpus() const { return m_hasCorpus; }
  bool anyFits() const { return m_fitCount > 0; }
  int fitCount() const { return m_fitCount; }
  int evaluated() const { return m_evaluated; }
  const search::RankedPlan& planAt(int row) const { return m_rows.at(static_cast<size_t>(row)); }

 private:
  // The rows in m_sortColumn's order (ties in the search's order).
  void applySort();

  std::vector<search::RankedPlan> m_rows;  // feasible (ranked), or the closest failing ones
  // Each row's place in the search's order (0 = best; among failing plans, the closest first): its
  // rank is that plus one, and what a selection follows through a sort.
  std::vector<size_t> m_places;
  int m_sortColumn = RankColumn;
  Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
  bool m_hasCorpus = false;
  int m_fitCount = 0;
  int m_evaluated = 0;
  QString m_whyNone;
  QString m_layoutReason;
  QString m_riskyNote;
};

}  // namespace spplan::gui
