#include "gui/run_panel.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>

#include "gui/run_chart_view.hpp"
#include "gui/run_step_model.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/knobs.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/machine.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::gui {
namespace {

QString number(const QJsonObject& o, const char* key, double scale, int decimals) {
  const QJsonValue v = o.value(key);
  return v.isDouble() ? QString::number(v.toDouble() / scale, 'f', decimals) : QObject::tr("n/a");
}

// NVIDIA's driver lists each GPU here; spplan-engine runs on them when it finds CUDA.
int nvidiaGpuCount() {
  return static_cast<int>(QDir(QStringLiteral("/proc/driver/nvidia/gpus")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

QLineEdit* pathEdit(QWidget* parent, const QString& placeholder, const QString& tip) {
  auto* e = new QLineEdit(parent);
  e->setPlaceholderText(placeholder);
  e->setToolTip(tip);
  e->setClearButtonEnabled(true);
  return e;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent),
      m_spplan(QDir(QCoreApplication::applicationDirPath()).filePath("spplan")),
      m_process(new QProcess(this)),
      m_steps(new RunStepModel(this)) {
  setAccessibleName(tr("Run it"));
  m_ramBytes = machine_ram_bytes();
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
  m_nprocSpin->setRange(1, maxProcessCount());
  m_nprocSpin->setToolTip(tr("--nproc: ranks on this machine, at most its %1 cores (sp must divide it)").arg(maxProcessCount()));
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
  connect(m_nprocSpin, &QSpinBox::valueChanged, this, [this] { updateButtons(); });

  m_dataEdit = pathEdit(this, tr("synthetic tokens"), tr("--data: token files (*.u16.bin, *.u32.bin from scripts/tokenize.py), comma-separated"));
  m_eosEdit = pathEdit(this, tr("none"), tr("--eos-id: the token that ends each document (scripts/tokenize.py prints it)"));
  m_initEdit = pathEdit(this, tr("seeded init"), tr("--init-from: a Hugging Face model folder to start from"));
  m_saveEdit = pathEdit(this, tr("no checkpoints"), tr("--save: the folder checkpoints are written to (also when stopped)"));
  m_resumeEdit = pathEdit(this, tr("from step 0"), tr("--resume: a --save folder to continue from"));
  auto* inputs = new QGridLayout;
  const std::pair<QString, QLineEdit*> fields[] = {{tr("&Data"), m_dataEdit},     {tr("EOS &id"), m_eosEdit},
                                                   {tr("&Init from"), m_initEdit}, {tr("Sa&ve to"), m_saveEdit},
                                                   {tr("Res&ume"), m_resumeEdit}};
  int column = 0;
  for (const auto& [text, edit] : fields) {
    auto* label = new QLabel(text, this);
    label->setBuddy(edit);
    inputs->addWidget(label, column / 6, column % 6);
    inputs->addWidget(edit, column / 6, column % 6 + 1);
    column += 2;
    connect(edit, &QLineEdit::textChanged, this, [this] { updateButtons(); });
  }
  m_deviceLabel = new QLabel(this);
  m_deviceLabel->setWordWrap(true);
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
  layout->addLayout(inputs);
  layout->addWidget(m_deviceLabel);
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
                                   .arg(gib(e.memory.needed_bytes()), 0, 'f', 1)
                                   .arg(e.tokens_per_s, 0, 'f', 0)
                                   .arg(trustText));
    m_nprocSpin->setValue(static_cast<int>(std::min<int64_t>(m_plan->plan.cluster.num_gpus, maxProcessCount())));
  }
  updateButtons();
}

void RunPanel::setProcessCount(int nproc) { m_nprocSpin->setValue(nproc); }

int RunPanel::maxProcessCount() const {
  const int gpus = nvidiaGpuCount();
  return gpus > 0 ? gpus : std::max(1, QThread::idealThreadCount());
}

void RunPanel::setRunInputs(const QString& data, const QString& eosId, const QString& initFrom, const QString& save,
                            const QString& resume) {
  m_dataEdit->setText(data);
  m_eosEdit->setText(eosId);
  m_initEdit->setText(initFrom);
  m_saveEdit->setText(save);
  m_resumeEdit->setText(resume);
}

PlanSpec RunPanel::runPlan() const {
  PlanSpec plan = m_plan ? m_plan->plan : PlanSpec{};
  plan.cluster.num_gpus = m_nprocSpin->value();
  plan.cluster.gpu.gpus_per_node = std::max<int64_t>(plan.cluster.gpu.gpus_per_node, plan.cluster.num_gpus);  // one machine
  plan.stack = trainer_stack("engine");
  plan.attention_named = false;
  settle_layout_attention(&plan);
  return plan;
}

void RunPanel::setMachineRam(std::optional<double> bytes) {
  m_ramBytes = bytes;
  updateButtons();
}

std::optional<costmodel::CpuRunMemory> RunPanel::cpuRunMemory() const {
  if (!m_plan || !m_ramBytes || nvidiaGpuCount() > 0) return std::nullopt;
  PlanSpec plan = runPlan();
  if (!check_plan(plan, flag_where).is_ok()) return std::nullopt;
  bool calibrated = false;
  plan.cluster.gpu = costmodel::this_cpu_host(plan.cluster.gpu, &calibrated);
  plan.cluster.gpu.gpus_per_node = plan.cluster.num_gpus;  // every rank on this machine
  return costmodel::cpu_run_memory(plan, *m_ramBytes);
}

QString RunPanel::refusal() const {
  if (!m_plan) return tr("no plan selected");
  const PlanSpec plan = runPlan();
  const WhereFn where = [](const std::string& key) { return flag_where(key); };
  if (const Status s = check_plan(plan, where); !s) return QString::fromStdString(s.message());
  // The ranks' peaks add up in RAM on a CPU: a run the machine cannot hold would be killed by the
  // OOM killer (or swap the machine to a halt) after its start-up; say so before it starts.
  if (const auto memory = cpuRunMemory(); memory && !memory->fits()) {
    return tr("this machine cannot hold it: %1 (allowed: fewer processes, or a plan that needs less)")
        .arg(QString::fromStdString(memory->words()));
  }
  if (!m_initEdit->text().isEmpty() && !m_resumeEdit->text().isEmpty()) {
    return tr("--init-from: not allowed with --resume (the checkpoint holds the weights; allowed: one of them)");
  }
  const QString eos = m_eosEdit->text().trimmed();
  bool ok = true;
  if (!eos.isEmpty() && (eos.toLongLong(&ok) < 0 || !ok)) return tr("--eos-id: value \"%1\" is not a token id (allowed: a whole number from 0)").arg(eos);
  return {};
}

QString RunPanel::deviceText() const {
  const int gpus = nvidiaGpuCount();
  const QString device = gpus > 0 ? tr("this machine's %1 NVIDIA GPU(s)").arg(gpus)
                                  : tr("this machine's CPU (%1 cores, Gloo between the processes)").arg(QThread::idealThreadCount());
  QString planGpu = m_plan ? QString::fromStdString(m_plan->plan.cluster.gpu.name) : tr("the plan's GPU");
  const auto memory = cpuRunMemory();
  const QString needs = memory ? tr(" Needs %1.").arg(QString::fromStdString(memory->words())) : QString();
  return tr("Runs on %1 with spplan-engine, %2 process(es).%4 Compared with: the planner's prediction for %3 (below) and, "
            "after the run, the engine's prediction for the device it ran on (calibrated CPU, or the GPU's preset).")
      .arg(device)
      .arg(m_nprocSpin->value())
      .arg(planGpu, needs);
}

QStringList RunPanel::runArguments(const QString& planPath) const {
  QStringList args{"run", "--plan", planPath, "--nproc", QString::number(m_nprocSpin->value()),
                   "--steps", QString::number(m_stepsSpin->value()), "--json"};
  const std::pair<const char*, QLineEdit*> optional[] = {{"--data", m_dataEdit},      {"--eos-id", m_eosEdit},
                                                         {"--init-from", m_initEdit}, {"--save", m_saveEdit},
                                                         {"--resume", m_resumeEdit}};
  for (const auto& [flag, edit] : optional) {
    if (!edit->text().trimmed().isEmpty()) args << QString::fromLatin1(flag) << edit->text().trimmed();
  }
  return args;
}
void RunPanel::setSteps(int steps) { m_stepsSpin->setValue(steps); }

bool RunPanel::start() {
  if (isRunning()) {
    setStatus(tr("a run is already going (stop it first)"), true);
    return false;
  }
  if (const QString why = refusal(); !why.isEmpty()) {
    setStatus(tr("not started: %1").arg(why), true);
    return false;
  }
  m_dir = std::make_unique<QTemporaryDir>();
  const QString planPath = m_dir->filePath("plan.toml");
  if (const Status s = write_file_atomically(planPath.toStdString(), plan_to_toml(runPlan())); !s) {
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
  m_killed = false;
  const QStringList args = runArguments(planPath);
  m_log->appendPlainText("$ " + m_spplan + " " + args.join(' '));
  setStatus(tr("running %1 steps on %2 process(es)…").arg(m_stepsSpin->value()).arg(m_nprocSpin->value()), false);
  m_process->start(m_spplan, args);
  updateButtons();
  return true;
}

void RunPanel::stop() {
  if (!isRunning()) return;
  if (m_stopRequested) {  // the second press: the user chose not to wait for the step to end
    setStatus(tr("stopping at once: SIGKILL sent to the launcher (pid %1); the step in progress is lost")
                  .arg(m_process->processId()),
              true);
    m_killed = true;
    m_process->kill();  // its ranks follow it (PR_SET_PDEATHSIG in launcher.cpp)
    return;
  }
  m_stopRequested = true;
  // No timer kills it: a long-sequence step (and the checkpoint after it) can take minutes, and
  // killing it would lose exactly what the graceful stop is for.
  setStatus(tr("stopping: SIGTERM sent to the launcher (pid %1); the ranks finish their step%2. Press Stop "
               "again to kill them at once.")
                .arg(m_process->processId())
                .arg(m_saveEdit->text().isEmpty() ? QString() : tr(" and save a checkpoint")),
            false);
  m_process->terminate();
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
  onStderr();
  m_stdout += m_process->readAllStandardOutput();
  const QJsonDocument doc = QJsonDocument::fromJson(m_stdout.trimmed());
  if (doc.isObject()) m_report = doc.object();
  if (m_killed) {
    setStatus(tr("killed after %1 step(s); the step in progress and a checkpoint it was writing are lost")
                  .arg(m_steps->rowCount()),
              true);
  } else if (m_stopRequested) {
    setStatus(tr("stopped after %1 step(s)%2; the launcher and its ranks have ended")
                  .arg(m_steps->rowCount())
                  .arg(m_saveEdit->text().isEmpty() ? QString() : tr(", checkpoint saved to %1").arg(m_saveEdit->text())),
              false);
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
  const QString why = refusal();
  m_startButton->setEnabled(m_plan && !isRunning() && why.isEmpty());
  m_startButton->setToolTip(why.isEmpty() ? tr("spplan run --plan (the selected plan) on this machine (Ctrl+R)")
                                          : tr("Cannot start this plan here: %1").arg(why));
  m_deviceLabel->setText(deviceText());
  if (!isRunning() && m_plan && !why.isEmpty()) setStatus(tr("cannot start this plan here: %1").arg(why), true);
  if (!isRunning() && m_plan && why.isEmpty() && m_statusLabel->text().startsWith(tr("cannot start this plan here"))) {
    setStatus(QString(), false);
  }
  m_stopButton->setEnabled(isRunning());
  m_nprocSpin->setEnabled(!isRunning());
  m_stepsSpin->setEnabled(!isRunning());
  for (QLineEdit* e : {m_dataEdit, m_eosEdit, m_initEdit, m_saveEdit, m_resumeEdit}) e->setEnabled(!isRunning());
}

QString RunPanel::statusText() const { return m_statusLabel->text(); }
QString RunPanel::predictionText() const { return m_predictionLabel->text(); }
QString RunPanel::log() const { return m_log->toPlainText(); }

}  // namespace spplan::gui
