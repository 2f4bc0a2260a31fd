#include "gui/run_panel.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "gui/run_chart_view.hpp"
#include "gui/run_step_model.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {
namespace {

QString number(const QJsonObject& o, const char* key, double scale, int decimals) {
  const QJsonValue v = o.value(key);
  return v.isDouble() ? QString::number(v.toDouble() / scale, 'f', decimals) : QObject::tr("n/a");
}

}  // namespace

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent),
      m_spplan(QDir(QCoreApplication::applicationDirPath()).filePath("spplan")),
      m_process(new QProcess(this)),
      m_killTimer(new QTimer(this)),
      m_steps(new RunStepModel(this)) {
  setAccessibleName(tr("Run it"));
  m_killTimer->setSingleShot(true);
  m_killTimer->setInterval(kStopGraceMs);
  connect(m_killTimer, &QTimer::timeout, m_process, &QProcess::kill);
  connect(m_process, &QProcess::readyReadStandardError, this, &RunPanel::onStderr);
  connect(m_process, &QProcess::readyReadStandardOutput, this, [this] { m_stdout += m_process->readAllStandardOutput(); });
  connect(m_process, &QProcess::finished, this, &RunPanel::onFinished);
  connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) {
      setStatus(tr("%1: cannot start (%2)").arg(m_spplan, m_process->errorString()), true);
      updateButtons();
    }
  });

  auto* controls = new QHBoxLayout;
  m_nprocSpin = new QSpinBox(this);
  m_nprocSpin->setRange(1, 1024);
  m_nprocSpin->setToolTip(tr("--nproc: ranks on this machine (sp must divide it)"));
  m_stepsSpin = new QSpinBox(this);
  m_stepsSpin->setRange(1, 1000000);
  m_stepsSpin->setValue(5);
  m_startButton = new QPushButton(tr("&Start run"), this);
  m_startButton->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  m_startButton->setToolTip(tr("spplan run --plan (the selected plan) on this machine (Ctrl+R)"));
  m_stopButton = new QPushButton(tr("S&top"), this);
  m_stopButton->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
  m_stopButton->setToolTip(tr("SIGTERM to the launcher: every rank ends (Ctrl+.)"));
  auto* nprocLabel = new QLabel(tr("&Processes"), this);
  nprocLabel->setBuddy(m_nprocSpin);
  auto* stepsLabel = new QLabel(tr("St&eps"), this);
  stepsLabel->setBuddy(m_stepsSpin);
  for (QWidget* w : std::initializer_list<QWidget*>{nprocLabel, m_nprocSpin, stepsLabel, m_stepsSpin, m_startButton, m_stopButton}) {
    controls->addWidget(w);
  }
  controls->addStretch(1);
  connect(m_startButton, &QPushButton::clicked, this, [this] { start(); });
  connect(m_stopButton, &QPushButton::clicked, this, &RunPanel::stop);

  m_statusLabel = new QLabel(this);
  m_statusLabel->setWordWrap(true);
  m_predictionLabel = new QLabel(this);
  m_predictionLabel->setWordWrap(true);
  m_predictionLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_resultLabel = new QLabel(this);
  m_resultLabel->setWordWrap(true);
  m_resultLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* table = new QTableView(this);
  table->setModel(m_steps);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_log = new QPlainTextEdit(this);
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(5000);
  m_log->setPlaceholderText(tr("the run's output"));
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table);
  split->addWidget(new RunChartView(m_steps, this));
  split->addWidget(m_log);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(m_predictionLabel);
  layout->addWidget(m_statusLabel);
  layout->addWidget(m_resultLabel);
  layout->addWidget(split, 1);
  setTabOrder(m_nprocSpin, m_stepsSpin);
  setTabOrder(m_stepsSpin, m_startButton);
  setTabOrder(m_startButton, m_stopButton);
  setPlan(nullptr, {});
}

RunPanel::~RunPanel() {
  if (isRunning()) {  // never leave ranks behind a closed window
    m_process->terminate();
    if (!m_process->waitForFinished(kStopGraceMs)) m_process->kill();
    m_process->waitForFinished(kStopGraceMs);
  }
}

void RunPanel::setPlan(const search::RankedPlan* plan, const QString& trustText) {
  if (isRunning()) {
    m_pending = Pending{plan ? std::make_unique<search::RankedPlan>(*plan) : nullptr, trustText};
    return;
  }
  m_plan = plan ? std::make_unique<search::RankedPlan>(*plan) : nullptr;
  if (!m_plan) {
    m_predictionLabel->setText(tr("Select a plan to run it."));
  } else {
    const costmodel::Estimate& e = m_plan->estimate;
    m_predictionLabel->setText(tr("Planner's prediction on %1× %2: step %3 s, peak %4 GiB per GPU, %5 tokens/s. %6")
                                   .arg(m_plan->plan.cluster.num_gpus)
                                   .arg(QString::fromStdString(m_plan->plan.cluster.gpu.name))
                                   .arg(e.time.step_time_s, 0, 'f', 3)
                                   .arg(gib(e.memory.total_bytes()), 0, 'f', 1)
                                   .arg(e.tokens_per_s, 0, 'f', 0)
                                   .arg(trustText));
    m_nprocSpin->setValue(static_cast<int>(std::min<int64_t>(m_plan->plan.cluster.num_gpus, 1024)));
  }
  updateButtons();
}

void RunPanel::setProcessCount(int nproc) { m_nprocSpin->setValue(nproc); }
void RunPanel::setSteps(int steps) { m_stepsSpin->setValue(steps); }

bool RunPanel::start() {
  if (isRunning()) {
    setStatus(tr("a run is already going (stop it first)"), true);
    return false;
  }
  if (!m_plan) {
    setStatus(tr("no plan selected"), true);
    return false;
  }
  m_dir = std::make_unique<QTemporaryDir>();
  const QString planPath = m_dir->filePath("plan.toml");
  if (const Status s = write_file_atomically(planPath.toStdString(), plan_to_toml(m_plan->plan)); !s) {
    setStatus(QString::fromStdString(s.message()), true);
    return false;
  }
  m_steps->clear();
  m_log->clear();
  m_stdout.clear();
  m_stderrTail.clear();
  m_report = {};
  m_resultLabel->clear();
  m_stopRequested = false;
  const QStringList args{"run", "--plan", planPath, "--nproc", QString::number(m_nprocSpin->value()),
                         "--steps", QString::number(m_stepsSpin->value()), "--json"};
  m_log->appendPlainText("$ " + m_spplan + " " + args.join(' '));
  setStatus(tr("running %1 steps on %2 process(es)…").arg(m_stepsSpin->value()).arg(m_nprocSpin->value()), false);
  m_process->start(m_spplan, args);
  updateButtons();
  return true;
}

void RunPanel::stop() {
  if (!isRunning()) return;
  m_stopRequested = true;
  setStatus(tr("stopping: SIGTERM sent to the launcher (pid %1)").arg(m_process->processId()), false);
  m_process->terminate();
  m_killTimer->start();
}

void RunPanel::onStderr() {
  m_stderrTail += m_process->readAllStandardError();
  qsizetype newline;
  while ((newline = m_stderrTail.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(m_stderrTail.left(newline)).trimmed();
    m_stderrTail.remove(0, newline + 1);
    m_log->appendPlainText(line);
    if (const auto step = parseProgressLine(line)) m_steps->append(*step);
  }
}

void RunPanel::onFinished(int exitCode, QProcess::ExitStatus status) {
  m_killTimer->stop();
  onStderr();
  m_stdout += m_process->readAllStandardOutput();
  const QJsonDocument doc = QJsonDocument::fromJson(m_stdout.trimmed());
  if (doc.isObject()) m_report = doc.object();
  if (m_stopRequested) {
    setStatus(tr("stopped after %1 step(s); the launcher and its ranks have ended").arg(m_steps->rowCount()), false);
  } else if (status == QProcess::CrashExit) {
    setStatus(tr("spplan run crashed"), true);
  } else if (exitCode != 0) {
    // The engine's own one-line message (bad plan, not built, out of memory) is the last log line.
    setStatus(tr("spplan run exited %1: %2").arg(exitCode).arg(m_log->toPlainText().section('\n', -1)), true);
  } else {
    setStatus(tr("finished %1 step(s)").arg(m_steps->rowCount()), false);
  }
  if (!m_report.isEmpty()) {
    m_resultLabel->setText(tr("This run: step %1 s measured, %2 s predicted by the engine for %3; peak %4 MiB measured, "
                              "%5 MiB predicted")
                               .arg(number(m_report, "step_time_s", 1, 3), number(m_report, "predicted_step_time_s", 1, 3),
                                    m_report.value("predicted_machine").toString(),
                                    number(m_report, "peak_memory_bytes", kMiB, 1),
                                    number(m_report, "predicted_peak_memory_bytes", kMiB, 1)));
  }
  if (m_pending) {
    const Pending pending = std::move(*m_pending);
    m_pending.reset();
    setPlan(pending.plan.get(), pending.trust);
  }
  updateButtons();
  Q_EMIT runFinished(exitCode);
}

void RunPanel::setStatus(const QString& text, bool error) {
  m_statusLabel->setStyleSheet(error ? "color: #c00000; font-weight: bold;" : "color: #444;");
  m_statusLabel->setText(text);
}

void RunPanel::updateButtons() {
  m_startButton->setEnabled(m_plan && !isRunning());
  m_stopButton->setEnabled(isRunning());
  m_nprocSpin->setEnabled(!isRunning());
  m_stepsSpin->setEnabled(!isRunning());
}

QString RunPanel::statusText() const { return m_statusLabel->text(); }
QString RunPanel::predictionText() const { return m_predictionLabel->text(); }
QString RunPanel::log() const { return m_log->toPlainText(); }

}  // namespace spplan::gui
