// PlanTabs: the tabs about the selected plan under the plan table. Memory (peak by category from
// PlanTableModel's row, peak against sequence length), Step timeline (the simulator), What to rent
// (every GPU preset and node shape; computed when the tab is shown, since it runs 15 searches),
// SP scaling, Run it, Check a run (a run's logs against the selected plan, CheckView) and Corpus (the
// corpus's document lengths against the plan's sequence length, CorpusModel). Each
// chart has a "Save image…" button; outcomes go to message().
#pragma once

#include <QTabWidget>
#include <optional>

#include "planner/search/search.hpp"

class QLabel;
class QTableView;

namespace spplan::gui {

class CheckView;
class CorpusChartView;
class CorpusModel;
class MemoryChartView;
class PlanTableModel;
class RentChartView;
class RentModel;
class RunPanel;
class SeqSweepModel;
class SpScalingModel;
class StepTimelineView;
class TrustTable;

class PlanTabs : public QTabWidget {
  Q_OBJECT

 public:
  enum Tab { MemoryTab, TimelineTab, RentTab, ScalingTab, RunTab, CheckTab, CorpusTab, TabCount };
  // "planner", "timeline", "rent", "sp-scaling", "run", "check", "corpus"
  static const char* tabFileName(int tab);

  // `plans` feeds the memory chart; `trust` (may be null: accuracy unknown) is not owned.
  PlanTabs(PlanTableModel* plans, const TrustTable* trust, QWidget* parent = nullptr);

  // The inputs of a new search (nullopt: the inputs are bad); the rent table follows them.
  // `constraints`: the knobs pinned (KnobPins); What to rent keeps them but sp, as `spplan rent`
  // refuses --sp (each option's GPU count differs).
  void setBase(const std::optional<PlanSpec>& base, const search::KnobConstraints& constraints = {});
  // `row` of the plan model, or -1 for none; `gpu` is the GPU name the trust text is for.
  void setSelected(int row, const std::string& gpu);

  SeqSweepModel* sweepModel() const { return m_sweepModel; }
  RentModel* rentModel() const { return m_rentModel; }
  // What to rent's table: sorted by $ per million tokens until a header click sorts by another
  // column (through a proxy: the model's rows, which the chart maps, keep their order).
  QTableView* rentTable() const { return m_rentTable; }
  QString hostMemoryLine() const;  // the Memory tab's host and NVMe line for the selected plan
  SpScalingModel* scalingModel() const { return m_scalingModel; }
  StepTimelineView* timeline() const { return m_timeline; }
  RunPanel* runPanel() const { return m_runPanel; }
  CheckView* checkView() const { return m_checkView; }
  // The Corpus tab's model (MainWindow sets it on each re-plan) and its chart.
  CorpusModel* corpusModel() const { return m_corpusModel; }
  CorpusChartView* corpusChart() const { return m_corpusChart; }

 Q_SIGNALS:
  void message(const QString& text, bool ok);

 private:
  QWidget* buildMemoryTab();
  QWidget* buildTimelineTab();
  QWidget* buildRentTab();
  QWidget* buildScalingTab();
  void updateRent();  // recomputes the rent table if the inputs changed since

  PlanTableModel* m_plans;
  const TrustTable* m_trust;
  SeqSweepModel* m_sweepModel;
  RentModel* m_rentModel;
  SpScalingModel* m_scalingModel;
  std::optional<PlanSpec> m_base;
  search::KnobConstraints m_rentConstraints;  // the pins What to rent searches with (no sp)
  bool m_rentStale = true;
  MemoryChartView* m_memoryChart = nullptr;
  StepTimelineView* m_timeline = nullptr;
  RentChartView* m_rentChart = nullptr;
  QTableView* m_rentTable = nullptr;
  QLabel* m_scalingTrustLabel = nullptr;
  QLabel* m_hostLabel = nullptr;  // the Memory tab's host and NVMe line
  RunPanel* m_runPanel = nullptr;
  CheckView* m_checkView = nullptr;
  CorpusModel* m_corpusModel;
  CorpusChartView* m_corpusChart = nullptr;
};

}  // namespace spplan::gui
