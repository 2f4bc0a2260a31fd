// SeqSweepModel: peak memory per GPU of one knob set at a few sequence lengths (seq/8 .. 4 x seq,
// doubling), from costmodel::estimate(). The seq chart maps its columns with QVXYModelMapper.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planner/config/plan_spec.hpp"

namespace spplan::gui {

class SeqSweepModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // SeqMegaColumn: the same length in M tokens (M = 1024 k), for a chart axis past a few M tokens.
  enum Column { SeqKiloColumn, PeakGibColumn, CapacityGibColumn, FitsColumn, SeqMegaColumn, ColumnCount };

  explicit SeqSweepModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // REQUIRES: check_plan(plan) is ok. Points around plan.seq_len with plan.knobs fixed.
  void setPlan(const PlanSpec& plan);
  void clear();

 private:
  struct Point {
    double seqTokens = 0;
    double peakBytes = 0;
    double capacityBytes = 0;
    bool fits = false;
  };
  std::vector<Point> m_points;
};

}  // namespace spplan::gui
