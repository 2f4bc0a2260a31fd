// SpScalingModel: the selected plan's other knobs at every sequence-parallel degree, for three
// layouts: Ulysses only (sp, cp 1), ring only (sp 1, cp) and Ulysses x ring (sp = the largest
// Ulysses degree inside one node, cp across). Each row is costmodel::estimate()'s tokens/s (whole
// cluster) and peak memory per GPU at degree sp x cp. Rows whose knobs break a plan rule there
// (the heads for sp, the zigzag split for cp) are left out. A layout the plan's trainer does not run
// (ArcticTraining has no ring attention; Accelerate's has no hybrid) is priced with the first
// trainer that runs it at those knobs (hf for a ring alone, then spplan-engine), on the attention
// kernel that layout runs there, a multimodal model's encoders frozen or trained as the plan holds
// them, and the trainer column says which; a layout no trainer runs at those knobs has no rows. Rows are grouped by layout, degrees
// ascending, so the chart maps each layout's rows as one series. Feeds the table and
// SpScalingChartView.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::gui {

class SpScalingModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    LayoutColumn, TrainerColumn, SpColumn, CpColumn, DegreeColumn, TokensPerSecondColumn, PeakGibColumn, CapacityGibColumn,
    StepSecondsColumn, FitsColumn, ColumnCount
  };
  enum Layout { Ulysses, Ring, Hybrid, LayoutCount };
  static const char* layoutName(Layout layout);  // "Ulysses", "ring", "Ulysses x ring"

  // Qt::DisplayRole: text, one format per column (tokens/s whole, GiB and seconds to 0.1 / 0.001);
  // ValueRole: the number, which the chart maps.
  static constexpr int ValueRole = Qt::UserRole;

  explicit SpScalingModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // REQUIRES: check_plan(plan) is ok.
  void setPlan(const PlanSpec& plan);
  void clear();

  const costmodel::Estimate& estimateAt(int row) const { return m_rows.at(static_cast<size_t>(row)).estimate; }
  // The plan a row prices: the selected plan at the row's degrees, on the trainer that runs them.
  const PlanSpec& planAt(int row) const { return m_rows.at(static_cast<size_t>(row)).plan; }
  // The rows of one layout: [first, first + count).
  int firstRow(Layout layout) const;
  int rowCountOf(Layout layout) const;

 private:
  struct Row {
    Layout layout = Ulysses;
    int64_t sp = 1, cp = 1;
    PlanSpec plan;
    costmodel::Estimate estimate;
  };
  std::vector<Row> m_rows;
};

}  // namespace spplan::gui
