// RunPanel: runs the selected plan on this machine with `spplan run --plan FILE --nproc N --steps K
// --json` (QProcess; spplan hands over to spplan-engine, which starts the ranks: Gloo on a CPU,
// NCCL on GPUs). Each progress line rank 0 prints on stderr becomes a row of RunStepModel (table
// and chart); beside it, the planner's prediction for the plan (with its measured accuracy), and
// when the run ends the engine's own measured-vs-predicted numbers from its --json object.
//
// The run is the selected plan reshaped to this machine: `--nproc N` processes (at most this
// machine's cores), so the plan file written says num_gpus N, priced for trainer "engine". Start
// refuses, with the engine's own message, what the engine refuses: check_plan (with
// check_trainer_runs for trainer "engine": planner/config/plan_rules.hpp) on that plan, the rule
// spplan run applies. Optional fields pass --data, --eos-id, --init-from, --save and --resume.
//
// Stop sends SIGTERM to the launcher (QProcess::terminate): it passes it on to the ranks, which
// finish their step, save a checkpoint when --save is set and print their report
// (engine/run/signals.hpp); pressing Stop again sends SIGKILL. Closing the window waits
// kStopGraceMs for the graceful stop before it kills.
#pragma once

#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QWidget>
#include <memory>
#include <optional>

#include "planner/costmodel/host_run.hpp"
#include "planner/search/search.hpp"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace spplan::gui {

class RunStepModel;

class RunPanel : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kStopGraceMs = 10000;

  explicit RunPanel(QWidget* parent = nullptr);
  ~RunPanel() override;

  // The spplan binary to start; default: `spplan` beside this executable.
  void setSpplanPath(const QString& path) { m_spplan = path; }
  // The plan Start runs and the prediction shown beside the run; `trustText` is the planner's
  // measured accuracy for the plan's GPU (TrustTable). Clears the prediction when `plan` is null.
  // During a run the running plan's prediction stays; the new plan applies when the run ends.
  void setPlan(const search::RankedPlan* plan, const QString& trustText);

  void setProcessCount(int nproc);
  int maxProcessCount() const;  // this machine's cores
  // The optional run fields ("" = not passed): --data, --eos-id, --init-from, --save, --resume.
  void setRunInputs(const QString& data, const QString& eosId, const QString& initFrom, const QString& save,
                    const QString& resume);
  // The plan Start would run (the selection reshaped to --nproc processes, trainer "engine"), and
  // the engine's verdict on it ("" when it runs).
  PlanSpec runPlan() const;
  // On a CPU (no NVIDIA GPU here) every rank's memory is this machine's RAM: what the run needs of
  // it, priced as `spplan run` prices it (costmodel/host_run.hpp); nullopt on a GPU machine or
  // when the RAM is not known.
  std::optional<costmodel::CpuRunMemory> cpuRunMemory() const;
  // The RAM cpuRunMemory holds the run against: /proc/meminfo's, or what a test sets.
  void setMachineRam(std::optional<double> bytes);
  QString refusal() const;
  QString deviceText() const;  // which device runs, and which predictions the run is compared with
  QStringList runArguments(const QString& planPath) const;
  void setSteps(int steps);
  bool start();  // false (and the reason in statusText) when no plan or one is running
  void stop();
  bool isRunning() const { return m_process->state() != QProcess::NotRunning; }
  qint64 launcherPid() const { return m_process->processId(); }

  RunStepModel* stepModel() const { return m_steps; }
  QString statusText() const;
  QString predictionText() const;
  QString log() const;
  const QJsonObject& report() const { return m_report; }  // the run's --json object, once finished

 Q_SIGNALS:
  void runFinished(int exitCode);

 private:
  void onStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void setStatus(const QString& text, bool error);
  void updateButtons();

  QString m_spplan;
  std::unique_ptr<search::RankedPlan> m_plan;
  struct Pending {
    std::unique_ptr<search::RankedPlan> plan;
    QString trust;
  };
  std::optional<Pending> m_pending;  // a selection made during a run
  std::unique_ptr<QTemporaryDir> m_dir;
  QProcess* m_process;
  QByteArray m_stderrTail;  // a partial line between reads
  QByteArray m_stdout;
  QJsonObject m_report;
  bool m_stopRequested = false;
  bool m_killed = false;  // Stop pressed twice
  RunStepModel* m_steps;
  QSpinBox* m_nprocSpin;
  QSpinBox* m_stepsSpin;
  QLineEdit* m_dataEdit;
  QLineEdit* m_eosEdit;
  QLineEdit* m_initEdit;
  QLineEdit* m_saveEdit;
  QLineEdit* m_resumeEdit;
  QLabel* m_deviceLabel;
  QPushButton* m_startButton;
  QPushButton* m_stopButton;
  QLabel* m_statusLabel;
  QLabel* m_predictionLabel;
  std::optional<double> m_ramBytes;
  QLabel* m_resultLabel;
  QPlainTextEdit* m_log;
};

}  // namespace spplan::gui
