// spplan-gui's "Run it" panel: the engine's progress line parsed, a real short CPU run of
// tiny-llama through `spplan run` shown step by step beside the prediction, and Stop ending the
// launcher and every rank. The runs are skipped when spplan-engine was not built.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QtTest>
#include <cmath>

#include "gui/progress_line.hpp"
#include "gui/run_panel.hpp"
#include "gui/run_step_model.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/core/units.hpp"

using spplan::gui::RunPanel;
using spplan::gui::RunStepModel;

namespace {

constexpr int kRunTimeoutMs = 120000;

// tiny-llama at 512 tokens over 2 ranks (sp 2), ZeRO 0, fp32: a step takes well under a second.
spplan::search::RankedPlan tinyPlan() {
  spplan::PlanSpec plan;
  plan.model = *spplan::load_model("tiny-llama");
  plan.cluster.gpu = *spplan::load_gpu("h100-80gb");
  plan.cluster.num_gpus = 2;
  plan.seq_len = 512;
  plan.knobs.sp = 2;
  plan.knobs.zero_stage = 0;
  plan.knobs.precision = spplan::Precision::kFp32;
  spplan::settle_layout_attention(&plan);  // the engine runs SDPA
  return {plan, spplan::costmodel::estimate(plan)};
}

bool engineBuilt() { return QFileInfo::exists(QStringLiteral(SPPLAN_ENGINE_EXE)); }

// The children of `pid` (the launcher's ranks).
QList<qint64> childrenOf(qint64 pid) {
  QFile file(QStringLiteral("/proc/%1/task/%1/children").arg(pid));
  QList<qint64> pids;
  if (!file.open(QIODevice::ReadOnly)) return pids;
  for (const QByteArray& word : file.readAll().split(' ')) {
    if (!word.trimmed().isEmpty()) pids << word.trimmed().toLongLong();
  }
  return pids;
}

// Gone, or a zombie waiting for a reaper (it runs no code and holds no memory).
bool ended(qint64 pid) {
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return true;
  const QByteArray text = stat.readAll();
  const qsizetype close = text.lastIndexOf(')');
  return close >= 0 && text.mid(close + 2, 1) == "Z";
}

}  // namespace

class TestGuiRun : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void progressLineParsesTheEngineFormat() {
    // engine/run/report.cpp progress_line(3, 5, 6.931472, 0.0003, 1.234, 812.5, 0.630, 41.2 MiB)
    const auto p = spplan::gui::parseProgressLine(
        "step 3/5  loss 6.931472  lr 0.0003  grad norm 1.234  tokens/s 812.5  step 0.630 s  peak memory 41.2 MiB");
    QVERIFY(p.has_value());
    QCOMPARE(p->step, 3);
    QCOMPARE(p->totalSteps, 5);
    QCOMPARE(p->loss, 6.931472);
    QCOMPARE(p->tokensPerS, 812.5);
    QCOMPARE(p->stepTimeS, 0.630);
    QCOMPARE(p->peakMemoryBytes, 41.2 * spplan::kMiB);
    QVERIFY(std::isnan(spplan::gui::parseProgressLine(
                           "step 1/5  loss nan  lr 0.0003  grad norm nan  tokens/s 1.0  step 1.000 s  peak memory 1.0 MiB")
                           ->loss));
    for (const char* other : {"spplan-engine: step 0.630 s measured, 0.500 s predicted (-20.6 %)",
                              "step 3/5  loss x  lr 0.0003  grad norm 1  tokens/s 1  step 1 s  peak memory 1 MiB", ""}) {
      QVERIFY2(!spplan::gui::parseProgressLine(other).has_value(), other);
    }
  }

  void runShowsEachStepBesideThePrediction() {
    if (!engineBuilt()) QSKIP("spplan-engine was not built");
    RunPanel panel;
    panel.setSpplanPath(QStringLiteral(SPPLAN_EXE));
    const auto plan = tinyPlan();
    QVERIFY(spplan::check_plan(plan.plan, spplan::flag_where).is_ok());
    panel.setPlan(&plan, QStringLiteral("trust"));
    QVERIFY(panel.predictionText().contains(QString::number(plan.estimate.time.step_time_s, 'f', 3)));
    panel.setSteps(3);
    QSignalSpy finished(&panel, &RunPanel::runFinished);
    QVERIFY(panel.start());
    const QString prediction = panel.predictionText();
    panel.setPlan(nullptr, QString());  // a new selection during the run waits for its end
    QCOMPARE(panel.predictionText(), prediction);
    QVERIFY(finished.wait(kRunTimeoutMs));
    QVERIFY2(finished.at(0).at(0).toInt() == 0, qPrintable(panel.log()));
    QCOMPARE(panel.predictionText(), QStringLiteral("Select a plan to run it."));
    const RunStepModel* steps = panel.stepModel();
    QCOMPARE(steps->rowCount(), 3);
    const QJsonArray losses = panel.report().value("losses").toArray();
    QCOMPARE(losses.size(), 3);
    for (int r = 0; r < 3; ++r) {
      QCOMPARE(steps->stepAt(r).step, r + 1);
      QVERIFY(std::fabs(steps->stepAt(r).loss - losses.at(r).toDouble()) < 1e-6);  // printed with 6 decimals
      QVERIFY(steps->stepAt(r).peakMemoryBytes > 0);
    }
    QVERIFY(panel.statusText().startsWith(QStringLiteral("finished 3 step(s)")));
  }

  void stopEndsTheLauncherAndEveryRank() {
    if (!engineBuilt()) QSKIP("spplan-engine was not built");
    RunPanel panel;
    panel.setSpplanPath(QStringLiteral(SPPLAN_EXE));
    const auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    panel.setSteps(100000);
    QSignalSpy finished(&panel, &RunPanel::runFinished);
    QVERIFY(panel.start());
    QTRY_VERIFY_WITH_TIMEOUT(panel.stepModel()->rowCount() >= 1, kRunTimeoutMs);
    const QList<qint64> ranks = childrenOf(panel.launcherPid());
    QCOMPARE(ranks.size(), 2);
    panel.stop();
    QVERIFY(finished.wait(RunPanel::kStopGraceMs + 5000));
    QVERIFY(!panel.isRunning());
    for (const qint64 rank : ranks) QTRY_VERIFY_WITH_TIMEOUT(ended(rank), 10000);
    QVERIFY(panel.statusText().startsWith(QStringLiteral("stopped after")));
  }

  // A second Stop does not wait for the step: the launcher is killed and its ranks with it.
  void secondStopKillsAtOnce() {
    if (!engineBuilt()) QSKIP("spplan-engine was not built");
    RunPanel panel;
    panel.setSpplanPath(QStringLiteral(SPPLAN_EXE));
    const auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    panel.setSteps(100000);
    QSignalSpy finished(&panel, &RunPanel::runFinished);
    QVERIFY(panel.start());
    QTRY_VERIFY_WITH_TIMEOUT(panel.stepModel()->rowCount() >= 1, kRunTimeoutMs);
    const QList<qint64> ranks = childrenOf(panel.launcherPid());
    panel.stop();
    QVERIFY(panel.statusText().contains(QStringLiteral("Press Stop again")));
    panel.stop();
    QVERIFY(finished.wait(5000));
    QVERIFY(!panel.isRunning());
    for (const qint64 rank : ranks) QTRY_VERIFY_WITH_TIMEOUT(ended(rank), 10000);
    QVERIFY(panel.statusText().startsWith(QStringLiteral("killed after")));
  }

  // Start refuses what spplan run refuses, with the rule's own message (plan_rules.hpp), and never
  // offers more processes than this machine has cores.
  void plansTheEngineRefusesAreNotStarted() {
    RunPanel panel;
    panel.setSpplanPath(QStringLiteral(SPPLAN_EXE));
    auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    QVERIFY(panel.maxProcessCount() >= 1);
    panel.setProcessCount(panel.maxProcessCount() + 5);
    QCOMPARE(panel.runPlan().cluster.num_gpus, panel.maxProcessCount());  // clamped to the cores
    if (panel.maxProcessCount() % 2 == 0) {
      QVERIFY2(panel.refusal().isEmpty(), qPrintable(panel.refusal()));
    }
    panel.setProcessCount(1);  // sp 2 does not divide 1 rank
    QVERIFY(panel.refusal().contains(QStringLiteral("--sp")));
    QVERIFY(!panel.start());
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("not started: ")), qPrintable(panel.statusText()));
    // ZeRO 3 without checkpointing: check_trainer_runs' message for trainer "engine".
    plan.plan.knobs.zero_stage = 3;
    plan.plan.knobs.act_ckpt = spplan::ActCkpt::kNone;
    panel.setPlan(&plan, QString());
    panel.setProcessCount(2);
    QVERIFY2(panel.refusal().contains(QStringLiteral("is not run by trainer \"engine\"")), qPrintable(panel.refusal()));
    QVERIFY(!panel.start());
    QVERIFY(panel.deviceText().startsWith(QStringLiteral("Runs on this machine's")));
    QVERIFY(panel.deviceText().contains(QStringLiteral("planner's prediction for h100-80gb")));
  }

  // On a CPU the ranks' peaks add up in RAM: a run this machine cannot hold is refused with what it
  // needs (costmodel/host_run.hpp), one it can hold says so beside the device.
  void aRunThisMachineCannotHoldIsRefused() {
    if (QDir(QStringLiteral("/proc/driver/nvidia/gpus")).exists()) QSKIP("a GPU machine: its runs are not held in RAM");
    RunPanel panel;
    if (panel.maxProcessCount() < 2) QSKIP("one core: the plan's sp 2 needs two processes");
    const auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    panel.setProcessCount(2);
    panel.setMachineRam(64.0 * 1024 * 1024 * 1024);
    QVERIFY2(panel.refusal().isEmpty(), qPrintable(panel.refusal()));
    const auto memory = panel.cpuRunMemory();
    QVERIFY(memory.has_value());
    QCOMPARE(memory->ranks, 2);
    QVERIFY(memory->per_rank_bytes > 0);
    QVERIFY2(panel.deviceText().contains(QStringLiteral(" Needs 2 ranks x ")), qPrintable(panel.deviceText()));
    // Less RAM than the two ranks' peaks (the OS's reserve is at least 8 GiB, so 9 GiB leaves 1).
    panel.setMachineRam(8.0 * 1024 * 1024 * 1024 + memory->needed_bytes() * 0.5);
    QVERIFY2(panel.refusal().startsWith(QStringLiteral("this machine cannot hold it: 2 ranks x ")), qPrintable(panel.refusal()));
    QVERIFY(panel.refusal().contains(QStringLiteral("GiB usable RAM (allowed: fewer processes, or a plan that needs less)")));
    QVERIFY(!panel.start());
    panel.setMachineRam(std::nullopt);  // RAM unknown: nothing to hold it against
    QVERIFY(!panel.cpuRunMemory().has_value());
    QVERIFY(panel.refusal().isEmpty());
  }

  // The fields pass the engine's flags; the plan file written is the run's (num_gpus = --nproc).
  void runFieldsBecomeFlags() {
    RunPanel panel;
    const auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    panel.setProcessCount(2);
    panel.setRunInputs(QStringLiteral("a.u16.bin"), QStringLiteral("2"), QString(), QStringLiteral("ckpt"),
                       QStringLiteral("old"));
    const QStringList args = panel.runArguments(QStringLiteral("p.toml"));
    QCOMPARE(args.join(' '), QStringLiteral("run --plan p.toml --nproc 2 --steps 5 --json --data a.u16.bin --eos-id 2 "
                                            "--save ckpt --resume old"));
    QCOMPARE(panel.runPlan().stack.trainer, std::string("engine"));
    panel.setRunInputs(QString(), QStringLiteral("-3"), QStringLiteral("hf"), QString(), QStringLiteral("old"));
    QVERIFY(panel.refusal().startsWith(QStringLiteral("--init-from: not allowed with --resume")));
    panel.setRunInputs(QString(), QStringLiteral("-3"), QString(), QString(), QString());
    QVERIFY(panel.refusal().startsWith(QStringLiteral("--eos-id: value \"-3\"")));
  }

  // The engine's line with MFU and ETA (engine/run/run_log.cpp) parses too.
  void progressLineWithMfuAndEta() {
    const auto p = spplan::gui::parseProgressLine(
        "step 3/5  loss 6.931472  lr 0.0003  grad norm 1.234  tokens/s 812.5  step 0.630 s  peak memory 41.2 MiB"
        "  MFU 12.5%  ETA 1m 05s");
    QVERIFY(p.has_value());
    QCOMPARE(p->step, 3);
    QVERIFY(p->mfu.has_value());
    QCOMPARE(*p->mfu, 0.125);
    QCOMPARE(p->eta, QStringLiteral("1m 05s"));
    const auto last = spplan::gui::parseProgressLine(
        "step 5/5  loss 6.9  lr 0.0003  grad norm 1.2  tokens/s 812.5  step 0.630 s  peak memory 41.2 MiB");
    QVERIFY(last.has_value() && !last->mfu && last->eta.isEmpty());
  }
};

QTEST_MAIN(TestGuiRun)
#include "tst_gui_run.moc"
