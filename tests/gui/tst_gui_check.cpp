// spplan-gui's "Check a run" tab: real runs' logs (tests/planner/check/data, make_fixtures.py says
// how each was made) against their plans show what planner/check computes, row for row and word for
// word; a run broken on purpose shows "the run is not the plan"; a bad file shows the line
// `spplan check` prints; the charts draw the run's own numbers; the selected plan is the one checked.
#include <QAbstractItemModelTester>
#include <QProcess>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <QAreaSeries>
#include <QLineSeries>
#include <QScatterSeries>

#include "gui/check_charts.hpp"
#include "gui/check_model.hpp"
#include "gui/check_view.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/plan_tabs.hpp"
#include "planner/check/run_log.hpp"
#include "planner/check/user_runs.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/units.hpp"
#include "tests/gui/fixtures.hpp"

using namespace spplan;
using namespace spplan::gui;

namespace {

const QString kData = QStringLiteral(SPPLAN_SOURCE_DIR "/tests/planner/check/data");
const QString kPlans = QStringLiteral(SPPLAN_SOURCE_DIR "/configs/plans");

struct Expected {
  check::RunMeasurements run;
  check::Band band;
  check::CheckReport report;
};

// What `spplan check --plan plan logs...` computes (cli/cmd_check.cpp checked_run).
Expected checkedByTheLibrary(const PlanSpec& plan, const QStringList& logs) {
  Expected e;
  for (const QString& log : logs) {
    auto one = check::read_run_log(log.toStdString());
    if (!one.ok()) qFatal("%s", one.status().message().c_str());
    check::merge_into(&e.run, *one);
  }
  e.band = *check::band_for(plan, check::runs_files_from_environment());
  e.report = check::check_run(plan, e.run, e.band);
  return e;
}

QString text(const std::string& s) { return QString::fromStdString(s); }

// Every row of both models against the report, word for word and number for number.
void compareModels(const CheckModel& model, const check::CheckReport& report) {
  QCOMPARE(model.rowCount(), static_cast<int>(report.comparisons.size()));
  for (int r = 0; r < model.rowCount(); ++r) {
    const check::Comparison& c = report.comparisons[static_cast<size_t>(r)];
    QCOMPARE(model.index(r, CheckModel::QuantityColumn).data().toString(), text(c.quantity));
    QCOMPARE(model.index(r, CheckModel::MeasuredAsColumn).data().toString(), text(c.measured_as));
    QCOMPARE(model.index(r, CheckModel::PredictedColumn).data(CheckModel::ValueRole).toDouble(), c.predicted);
    QCOMPARE(model.index(r, CheckModel::MeasuredColumn).data(CheckModel::ValueRole).toDouble(), c.measured);
    QCOMPARE(model.index(r, CheckModel::ErrorColumn).data(CheckModel::ValueRole).toDouble(), c.error_pct());
  }
  const CheckFindingsModel* findings = model.findingsModel();
  QCOMPARE(findings->rowCount(), static_cast<int>(report.findings.size()));
  for (int r = 0; r < findings->rowCount(); ++r) {
    const check::Finding& f = report.findings[static_cast<size_t>(r)];
    QCOMPARE(findings->index(r, CheckFindingsModel::IdColumn).data().toString(), text(f.id));
    QCOMPARE(findings->index(r, CheckFindingsModel::WordsColumn).data().toString(), text(f.words));
    QCOMPARE(findings->index(r, CheckFindingsModel::CauseColumn).data().toString(), text(f.cause));
    QCOMPARE(findings->index(r, CheckFindingsModel::VerdictColumn).data().toString(),
             f.not_the_plan ? QStringLiteral("not the plan") : QStringLiteral("note"));
  }
  QCOMPARE(model.verdictText(), report.as_planned() ? QStringLiteral("as planned") : QStringLiteral("the run is not the plan"));
}

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  file.write(bytes);
  return path;
}

// The line `spplan check` prints on stderr for these arguments, without "spplan: ".
QString cliMessage(const QStringList& args) {
  QProcess cli;
  cli.start(QStringLiteral(SPPLAN_EXE), QStringList{"check"} + args);
  if (!cli.waitForFinished(60000)) return QStringLiteral("(spplan check did not finish)");
  QString err = QString::fromUtf8(cli.readAllStandardError()).trimmed();
  if (err.startsWith("spplan: ")) err.remove(0, 8);
  return err;
}

}  // namespace

class TestGuiCheck : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void realRunsShowWhatTheCheckerComputes_data() {
    QTest::addColumn<QString>("plan");
    QTest::addColumn<QStringList>("logs");
    QTest::newRow("hf trainer_state") << kData + "/hf_sp2/plan.toml" << QStringList{kData + "/hf_sp2/trainer_state.json"};
    QTest::newRow("hf deepspeed + trainer_state")
        << kData + "/hf_sp2/plan.toml" << QStringList{kData + "/hf_sp2/deepspeed.log", kData + "/hf_sp2/trainer_state.json"};
    QTest::newRow("arctic metrics") << kData + "/arctic_sp2/plan.toml" << QStringList{kData + "/arctic_sp2/metrics.jsonl"};
    QTest::newRow("engine log") << kPlans + "/tiny-llama-4k-cpu.toml" << QStringList{kData + "/engine_sp2.log.jsonl"};
    QTest::newRow("engine ring json") << kData + "/ring_cp2_cpu.toml" << QStringList{kData + "/engine_cp2.json"};
    QTest::newRow("h100 engine json") << kData + "/gpu/h100-2026-11-26/q06-16k.plan.toml"
                                      << QStringList{kData + "/gpu/h100-2026-11-26/q06-16k.json"};
    QTest::newRow("h200 torch lines") << kData + "/gpu/h200_engine_q06_16k.plan.toml"
                                      << QStringList{kData + "/gpu/h200_engine_q06_16k.memory.log"};
    QTest::newRow("h200 deepspeed") << kData + "/gpu/h200_zero2_q06_16k.plan.toml"
                                    << QStringList{kData + "/gpu/h200_zero2_q06_16k.deepspeed.log"};
  }
  void realRunsShowWhatTheCheckerComputes() {
    QFETCH(QString, plan);
    QFETCH(QStringList, logs);
    CheckView view;
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester findingsTester(view.model()->findingsModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY2(view.openPlan(plan).is_ok(), qPrintable(view.statusText()));
    QVERIFY2(view.openLogs(logs).is_ok(), qPrintable(view.statusText()));
    const Expected e = checkedByTheLibrary(*load_plan(plan.toStdString()), logs);
    QVERIFY(!e.report.comparisons.empty());
    compareModels(*view.model(), e.report);
    QVERIFY(e.report.as_planned());  // test_real_runs: each launched as its plan says
    QCOMPARE(view.verdictText(), QStringLiteral("as planned"));
    QVERIFY(view.summaryText().contains(plan));
    for (const std::string& format : e.run.formats) QVERIFY(view.summaryText().contains(text(format)));
    // The band column is spplan check's band words.
    for (int r = 0; r < view.model()->rowCount(); ++r) {
      const check::Comparison& c = e.report.comparisons[static_cast<size_t>(r)];
      const bool memory = c.quantity == "peak_memory";
      QCOMPARE(view.model()->index(r, CheckModel::BandColumn).data().toString(),
               text(check::band_words(memory ? e.band.memory : e.band.speed,
                                      memory ? e.band.your_memory : e.band.your_speed, e.band.scope)));
    }
  }

  void aRunBrokenOnPurposeIsNotThePlan() {
    // The HF Trainer launched from the accelerate export with its parallelism_config removed.
    CheckView view;
    QVERIFY(view.openPlan(kData + "/hf_sp2/plan.toml").is_ok());
    const QStringList logs{kData + "/hf_sp2_dropped/trainer_state.json"};
    QVERIFY(view.openLogs(logs).is_ok());
    compareModels(*view.model(), checkedByTheLibrary(*load_plan((kData + "/hf_sp2/plan.toml").toStdString()), logs).report);
    QCOMPARE(view.verdictText(), QStringLiteral("the run is not the plan"));
    const CheckFindingsModel* findings = view.model()->findingsModel();
    bool notSplit = false;
    for (int r = 0; r < findings->rowCount(); ++r) {
      if (findings->index(r, CheckFindingsModel::IdColumn).data().toString() == "not_split") {
        notSplit = true;
        QCOMPARE(findings->index(r, CheckFindingsModel::VerdictColumn).data().toString(), QStringLiteral("not the plan"));
        QVERIFY(findings->index(r, 0).data(CheckFindingsModel::NotThePlanRole).toBool());
      }
    }
    QVERIFY(notSplit);
  }

  void aBadFileShowsTheCliMessage_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<QByteArray>("content");  // empty: the file is not written
    QTest::newRow("missing") << "missing.log" << QByteArray();
    QTest::newRow("unknown format") << "notes.txt" << QByteArray("the run went fine\n");
    QTest::newRow("pickle") << "snapshot.pickle" << QByteArray("\x80\x04\x95\x10\x00\x00", 6);
    QTest::newRow("smi header without rows") << "smi.csv" << QByteArray("index, memory.used [MiB]\n");
  }
  void aBadFileShowsTheCliMessage() {
    QFETCH(QString, log);
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    const QString path = content.isEmpty() ? dir.filePath(log) : writeFile(dir, log, content);
    const QString plan = kData + "/hf_sp2/plan.toml";
    CheckView view;
    QVERIFY(view.openPlan(plan).is_ok());
    QVERIFY(view.openLogs({kData + "/hf_sp2/trainer_state.json"}).is_ok());
    const Status s = view.openLogs({path});
    QVERIFY(!s.is_ok());
    QCOMPARE(view.statusText(), text(check::read_run_log(path.toStdString()).status().message()));
    QCOMPARE(view.statusText(), cliMessage({"--plan", plan, path}));
    QVERIFY(!view.model()->hasReport());  // the run before is not shown as this one
    QCOMPARE(view.model()->rowCount(), 0);
    QCOMPARE(view.verdictText(), QString());
  }

  void aBadPlanFileShowsTheCliMessage() {
    QTemporaryDir dir;
    const QString plan = writeFile(dir, "plan.toml", "[model]\nname = 3\n");
    CheckView view;
    QVERIFY(!view.openPlan(plan).is_ok());
    QCOMPARE(view.statusText(), text(load_plan(plan.toStdString()).status().message()));
    QCOMPARE(view.statusText(), cliMessage({"--plan", plan, kData + "/hf_sp2/trainer_state.json"}));
    QVERIFY(view.model()->plan() == nullptr);
  }

  void theChartsDrawTheRunsOwnNumbers() {
    CheckView view;
    const CheckModel* model = view.model();
    // A DeepSpeed log of the HF run: its timer lines' steps against the predicted step time.
    QVERIFY(view.openPlan(kData + "/hf_sp2/plan.toml").is_ok());
    QVERIFY(view.openLogs({kData + "/hf_sp2/deepspeed.log"}).is_ok());
    const std::vector<double>& steps = model->run().step_times_s;
    QVERIFY(steps.size() > 1);
    QCOMPARE(view.stepChart()->measuredPoints()->count(), static_cast<int>(steps.size()));
    for (int i = 0; i < view.stepChart()->measuredPoints()->count(); ++i) {
      QCOMPARE(view.stepChart()->measuredPoints()->at(i).y(), steps[static_cast<size_t>(i)]);
    }
    const int stepRow = model->rowOf("step_time");
    QVERIFY(stepRow >= 0);
    QCOMPARE(view.stepChart()->predictedSeries()->count(), 2);
    QCOMPARE(view.stepChart()->predictedSeries()->at(0).y(), model->comparisonAt(stepRow).predicted);
    QCOMPARE(view.stepChart()->bandSeries()->isVisible(), model->bandRange(stepRow).has_value());

    // The engine's step lines: a memory sample each, of the allocator's peak the check compares.
    QVERIFY(view.openPlan(kPlans + "/tiny-llama-4k-cpu.toml").is_ok());
    QVERIFY(view.openLogs({kData + "/engine_sp2.log.jsonl"}).is_ok());
    const check::RunMeasurements& run = model->run();
    QVERIFY(run.memory_samples_bytes.size() > 1);
    QVERIFY(view.memoryChart()->showsSamples());
    QCOMPARE(view.memoryChart()->measuredPoints()->count(), static_cast<int>(run.memory_samples_bytes.size()));
    QCOMPARE(view.memoryChart()->measuredPoints()->at(0).y(), run.memory_samples_bytes[0] / kGiB);
    const int memoryRow = model->rowOf("peak_memory");
    QVERIFY(memoryRow >= 0);
    QCOMPARE(view.memoryChart()->predictedSeries()->at(0).y(), model->comparisonAt(memoryRow).predicted / kGiB);
    // On a CPU no `spplan calibrate` measured there is no predicted step time, and no line for it.
    if (model->rowOf("step_time") < 0) QCOMPARE(view.stepChart()->predictedSeries()->count(), 0);

    // The engine's --json report: one peak, drawn as one marker.
    QVERIFY(view.openLogs({kData + "/engine_sp2.json"}).is_ok());
    QVERIFY(!view.memoryChart()->showsSamples());
    QCOMPARE(view.memoryChart()->measuredPoints()->count(), 1);
    QCOMPARE(view.memoryChart()->measuredPoints()->at(0).y(), model->comparisonAt(model->rowOf("peak_memory")).measured / kGiB);
  }

  void theSelectedPlanIsChecked() {
    MainWindow window;
    window.setInputs(testing::knownOptions());
    window.recomputeNow();
    QVERIFY(window.selectedRow() >= 0);
    CheckView* view = window.tabs()->checkView();
    const QStringList logs{kData + "/gpu/h100-2026-11-26/q06-16k.json"};
    QVERIFY2(view->openLogs(logs).is_ok(), qPrintable(view->statusText()));
    const PlanSpec& selected = window.planModel()->planAt(window.selectedRow()).plan;
    QCOMPARE(text(plan_to_toml(*view->model()->plan())), text(plan_to_toml(selected)));
    compareModels(*view->model(), checkedByTheLibrary(selected, logs).report);
    // A plan file then wins over the table until "Use the selected plan".
    const QString file = kData + "/gpu/h100-2026-11-26/q06-16k.plan.toml";
    QVERIFY(view->openPlan(file).is_ok());
    compareModels(*view->model(), checkedByTheLibrary(*load_plan(file.toStdString()), logs).report);
    view->useSelectedPlan();
    compareModels(*view->model(), checkedByTheLibrary(selected, logs).report);
    // The tab is the last one, Ctrl+6.
    QCOMPARE(window.tabs()->tabText(PlanTabs::CheckTab), QStringLiteral("Chec&k a run"));
    QCOMPARE(QString::fromLatin1(PlanTabs::tabFileName(PlanTabs::CheckTab)), QStringLiteral("check"));
  }
};

QTEST_MAIN(TestGuiCheck)
#include "tst_gui_check.moc"
