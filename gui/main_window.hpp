// MainWindow: inputs (model, GPU, GPUs, GPUs per node, sequence length, trainer; below them the
// optimizer settings, OptimizerInputs, and the corpus, CorpusInputs) on top, a fits
// banner with the planner's measured accuracy for the GPU, the ranked plan table with the export
// buttons, and PlanTabs for the selected plan. With a corpus each plan holds its documents packed
// at the sequence length as typed (corpus::pack_into_plan, the step `spplan plan --lengths` takes),
// the table shows real tokens/s and the epoch, and the banner the selected plan's epochs. Every number shown comes from a model over the
// planner or simulator libraries; inputs are parsed with the CLI's functions and errors use the
// CLI's words.
//
// Keyboard: Alt+letter moves to an input (underlined in its label), Ctrl+1..7 the tabs, F5
// recomputes, Ctrl+O opens a model config, Ctrl+S saves the plan, Ctrl+R runs it, Ctrl+. stops,
// Ctrl+L opens a run's logs to check against the selected plan (the Check a run tab).
#pragma once

#include <QMainWindow>
#include <optional>

#include "gui/gui_options.hpp"
#include "gui/trust.hpp"
#include "planner/config/plan_spec.hpp"
#include "planner/costmodel/estimate.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace spplan::gui {

class CorpusInputs;
class ExportBar;
class KnobPins;
class OptimizerInputs;
class PlanTableModel;
class PlanTabs;
class SeqSweepModel;
class StackChoices;
class StepTimelineView;
struct SessionState;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  void setInputs(const GuiOptions& options);  // fills the widgets; recomputes after the debounce
  void recomputeNow();                          // parses the inputs, searches, refreshes the views
  // Restores the inputs QSettings saved; false when there is no saved session.
  bool restoreSession();
  SessionState sessionState() const;
  // Writes one PNG per tab (planner.png, timeline.png, rent.png, sp-scaling.png, run.png,
  // check.png, corpus.png) of the window as it is now into `dir`.
  Status saveScreenshots(const QString& dir);

  PlanTableModel* planModel() const { return m_planModel; }
  SeqSweepModel* sweepModel() const;
  StepTimelineView* timeline() const;
  ExportBar* exportBar() const { return m_exportBar; }
  PlanTabs* tabs() const { return m_tabs; }
  QComboBox* modelCombo() const { return m_modelCombo; }
  QComboBox* gpuCombo() const { return m_gpuCombo; }
  QSpinBox* gpusSpin() const { return m_gpusSpin; }
  QSpinBox* perNodeSpin() const { return m_perNodeSpin; }
  QLineEdit* seqEdit() const { return m_seqEdit; }
  QComboBox* trainerCombo() const { return m_trainerCombo; }
  QLineEdit* priceEdit() const { return m_priceEdit; }
  QLineEdit* headroomEdit() const { return m_headroomEdit; }
  OptimizerInputs* optimizerInputs() const { return m_optimizer; }
  CorpusInputs* corpusInputs() const { return m_corpus; }
  KnobPins* knobPins() const { return m_pins; }
  StackChoices* stackChoices() const { return m_stack; }
  // Writes the selected plan as "Save plan…" does (the plan TOML `spplan plan --out` writes).
  Status savePlanTo(const QString& path);
  QLabel* statusLabel() const { return m_statusLabel; }
  QLabel* bannerLabel() const { return m_bannerLabel; }
  QLabel* trustLabel() const { return m_trustLabel; }
  QLabel* modelLabel() const { return m_modelLabel; }  // the selected plan's model as priced
  QTableView* planTable() const { return m_table; }
  int selectedRow() const { return m_selectedRow; }  // the row the tabs and the banner show

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  QWidget* buildInputs();
  void addShortcuts();
  void scheduleRecompute();
  Result<PlanSpec> baseFromInputs() const;
  void showError(const QString& message);
  void selectRow(int row);
  void updateBanner(int row);
  QString epochText(const costmodel::Estimate& e) const;  // "epoch: 2 h 55 min, $21.12; 3 epochs: ..."
  void showCorpusColumns(bool corpus);  // real tokens/s and the epoch, or tokens/s and $/Mtok
  void showPricedModel(const PlanSpec& plan);  // the model line: RoPE, encoders, window, mixture
  void onGpuChanged(const QString& text);
  void openModelConfig();
  void savePlan();
  void showMessage(const QString& message, bool ok);

  PlanTableModel* m_planModel;
  QTimer* m_debounce;
  std::optional<TrustTable> m_trust;
  QString m_trustError;
  int m_selectedRow = -1;
  QComboBox* m_modelCombo = nullptr;
  QComboBox* m_gpuCombo = nullptr;
  QSpinBox* m_gpusSpin = nullptr;
  QSpinBox* m_perNodeSpin = nullptr;
  QLineEdit* m_seqEdit = nullptr;
  QComboBox* m_trainerCombo = nullptr;
  QLineEdit* m_priceEdit = nullptr;     // --price-per-gpu-hour; empty: the GPU file's
  QLineEdit* m_headroomEdit = nullptr;  // --headroom PCT; empty: 0
  OptimizerInputs* m_optimizer = nullptr;
  CorpusInputs* m_corpus = nullptr;
  KnobPins* m_pins = nullptr;
  StackChoices* m_stack = nullptr;  // --attention, --freeze-encoders / --train-encoders
  QPushButton* m_openButton = nullptr;
  QPushButton* m_saveButton = nullptr;
  QLabel* m_statusLabel = nullptr;
  QLabel* m_bannerLabel = nullptr;
  QLabel* m_trustLabel = nullptr;
  QLabel* m_modelLabel = nullptr;
  QTableView* m_table = nullptr;
  ExportBar* m_exportBar = nullptr;
  PlanTabs* m_tabs = nullptr;
};

}  // namespace spplan::gui
