// MainWindow: inputs (model, GPU, GPUs, GPUs per node, sequence length) on top, a fits banner,
// the ranked plan table, and the two charts. Every number shown comes from PlanTableModel or
// SeqSweepModel; inputs are parsed with the CLI's functions and errors use the CLI's words.
#pragma once

#include <QMainWindow>
#include <optional>

#include "gui/gui_options.hpp"
#include "planner/config/plan_spec.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QTimer;

namespace spplan::gui {

class MemoryChartView;
class PlanTableModel;
class SeqChartView;
class SeqSweepModel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  void setInputs(const GuiOptions& options);  // fills the widgets; recomputes after the debounce
  void recomputeNow();                          // parses the inputs, searches, refreshes the views

  PlanTableModel* planModel() const { return m_planModel; }
  SeqSweepModel* sweepModel() const { return m_sweepModel; }
  QComboBox* modelCombo() const { return m_modelCombo; }
  QLineEdit* seqEdit() const { return m_seqEdit; }
  QLabel* statusLabel() const { return m_statusLabel; }
  QLabel* bannerLabel() const { return m_bannerLabel; }
  QTableView* planTable() const { return m_table; }

 private:
  QWidget* buildInputs();
  void scheduleRecompute();
  Result<PlanSpec> baseFromInputs() const;
  void showError(const QString& message);
  void selectRow(int row);
  void updateBanner(int row);
  void onGpuChanged(const QString& text);
  void openModelConfig();
  void savePlan();

  PlanTableModel* m_planModel;
  SeqSweepModel* m_sweepModel;
  QTimer* m_debounce;
  int m_selectedRow = -1;
  QComboBox* m_modelCombo = nullptr;
  QComboBox* m_gpuCombo = nullptr;
  QSpinBox* m_gpusSpin = nullptr;
  QSpinBox* m_perNodeSpin = nullptr;
  QLineEdit* m_seqEdit = nullptr;
  QComboBox* m_trainerCombo = nullptr;
  QPushButton* m_saveButton = nullptr;
  QLabel* m_statusLabel = nullptr;
  QLabel* m_bannerLabel = nullptr;
  QTableView* m_table = nullptr;
  MemoryChartView* m_memoryChart = nullptr;
  SeqChartView* m_seqChart = nullptr;
};

}  // namespace spplan::gui
