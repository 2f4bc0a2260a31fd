// RunPanel: runs the selected plan on this machine with `spplan run --plan FILE --nproc N --steps K
// --json` (QProcess; spplan hands over to spplan-engine, which starts the ranks: Gloo on a CPU,
// NCCL on GPUs). Each progress line rank 0 prints on stderr becomes a row of RunStepModel (table
// and chart); beside it, the planner's prediction for the plan (with its measured accuracy), and
// when the run ends the engine's own measured-vs-predicted numbers from its --json object.
//
// Stop sends SIGTERM to the launcher (QProcess::terminate). The launcher installs no handler, so
// it ends at once and its ranks end with it (PR_SET_PDEATHSIG, engine/run/launcher.cpp); if it is
// still there after kStopGraceMs the panel sends SIGKILL.
#pragma once

#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QWidget>
#include <memory>
#include <optional>

#include "planner/search/search.hpp"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTimer;

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
  QTimer* m_killTimer;
  QByteArray m_stderrTail;  // a partial line between reads
  QByteArray m_stdout;
  QJsonObject m_report;
  bool m_stopRequested = false;
  RunStepModel* m_steps;
  QSpinBox* m_nprocSpin;
  QSpinBox* m_stepsSpin;
  QPushButton* m_startButton;
  QPushButton* m_stopButton;
  QLabel* m_statusLabel;
  QLabel* m_predictionLabel;
  QLabel* m_resultLabel;
  QPlainTextEdit* m_log;
};

}  // namespace spplan::gui
