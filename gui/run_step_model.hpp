// RunStepModel: the steps of a live `spplan run`, one row per progress line (step, loss, step
// time, peak memory). Feeds the run table and RunChartView.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "gui/progress_line.hpp"

namespace spplan::gui {

class RunStepModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { StepColumn, LossColumn, StepSecondsColumn, TokensPerSecondColumn, PeakMibColumn, ColumnCount };

  explicit RunStepModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  void append(const StepProgress& step);  // one row inserted at the end
  void clear();
  const StepProgress& stepAt(int row) const { return m_steps.at(static_cast<size_t>(row)); }

 private:
  std::vector<StepProgress> m_steps;
};

}  // namespace spplan::gui
