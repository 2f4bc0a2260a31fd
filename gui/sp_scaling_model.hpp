// SpScalingModel: one knob set at every valid Ulysses degree. The selected plan with only sp
// changed (valid_sp_degrees of its model on its GPU count), each row costmodel::estimate()'s
// tokens/s (whole cluster) and peak memory per GPU. Rows whose other knobs break a plan rule at
// that sp are left out. Feeds the table and SpScalingChartView.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

namespace spplan::gui {

class SpScalingModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { SpColumn, TokensPerSecondColumn, PeakGibColumn, CapacityGibColumn, StepSecondsColumn, FitsColumn, ColumnCount };

  explicit SpScalingModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // REQUIRES: check_plan(plan) is ok.
  void setPlan(const PlanSpec& plan);
  void clear();

  const costmodel::Estimate& estimateAt(int row) const { return m_rows.at(static_cast<size_t>(row)).estimate; }

 private:
  struct Row {
    int64_t sp = 0;
    costmodel::Estimate estimate;
  };
  std::vector<Row> m_rows;
};

}  // namespace spplan::gui
