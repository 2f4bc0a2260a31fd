// spplan-gui's "Run it" panel: the engine's progress line parsed, a real short CPU run of
// tiny-llama through `spplan run` shown step by step beside the prediction, and Stop ending the
// launcher and every rank. The runs are skipped when spplan-engine was not built.
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
  spplan::pick_attention_for_precision(&plan);  // fp32 runs SDPA: FlashAttention 2 has no fp32 kernels
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

  void engineMessageShownWhenThePlanIsRefused() {
    if (!engineBuilt()) QSKIP("spplan-engine was not built");
    RunPanel panel;
    panel.setSpplanPath(QStringLiteral(SPPLAN_EXE));
    const auto plan = tinyPlan();
    panel.setPlan(&plan, QString());
    panel.setProcessCount(3);  // sp 2 does not divide 3 ranks: the engine's own message
    QSignalSpy finished(&panel, &RunPanel::runFinished);
    QVERIFY(panel.start());
    QVERIFY(finished.wait(kRunTimeoutMs));
    QCOMPARE(finished.at(0).at(0).toInt(), 2);
    QVERIFY2(panel.statusText().startsWith(QStringLiteral("spplan run exited 2: ")), qPrintable(panel.statusText()));
    QVERIFY(panel.statusText().contains(QStringLiteral("sp")));
  }
};

QTEST_MAIN(TestGuiRun)
#include "tst_gui_run.moc"
