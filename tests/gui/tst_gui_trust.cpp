// spplan-gui's measured accuracy (gui/trust.hpp): the statistics over every results file, the
// rows it must not count, the bad-input messages, the window's trust line and Run it's, and that
// the shipped validation/results/*.json are today's reports of every validation/*.csv.
#include <QComboBox>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/gui_options.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_tabs.hpp"
#include "gui/run_panel.hpp"
#include "gui/trust.hpp"

using namespace spplan::gui;

namespace {

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
  const QString path = dir.filePath(name);
  QFile file(path);
  file.open(QIODevice::WriteOnly);
  file.write(text);
  return path;
}

QString messageOf(const spplan::Result<TrustTable>& table) {
  return table.ok() ? QStringLiteral("(loaded)") : QString::fromStdString(table.status().message());
}

QJsonObject readJson(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace

class TestGuiTrust : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void trustIsTheMeanAndMaxErrorPerGpu() {
    QTemporaryDir dir;
    const QString path = writeFile(dir, "v.json", R"({"rows": [
        {"gpu": "h100-80gb", "memory": {"delta_pct": 5.0}, "tokens_per_s": {"delta_pct": -10.0}},
        {"gpu": "h100-80gb", "memory": {"delta_pct": -15.0}, "tflops_per_gpu": {"delta_pct": 2.0}},
        {"gpu": "h100-80gb", "step_time_s": {"delta_pct": -12.0}},
        {"gpu": "a100-80gb"}]})");
    const auto table = TrustTable::load(path.toStdString());
    QVERIFY2(table.ok(), qPrintable(messageOf(table)));
    const spplan::Accuracy h100 = table->forGpu("h100-80gb");
    QCOMPARE(h100.memory.count, 2);
    QCOMPARE(h100.memory.mean_abs_pct, 10.0);
    QCOMPARE(h100.memory.max_abs_pct, 15.0);
    QCOMPARE(h100.speed.count, 3);  // a step time counts by |delta|, like throughput
    QCOMPARE(h100.speed.mean_abs_pct, 8.0);
    QCOMPARE(h100.speed.max_abs_pct, 12.0);
    QCOMPARE(table->shortText("h100-80gb"), QStringLiteral("mem ±10.0%, speed ±8.0%"));
    QCOMPARE(table->shortText("a100-80gb"), QStringLiteral("not validated"));
    QCOMPARE(table->memoryText("h100-80gb"), QStringLiteral("measured memory error on h100-80gb: ±10.0% mean, max 15.0% (2 runs)"));
    QCOMPARE(table->memoryText("b200"), QStringLiteral("measured memory error: not validated on b200"));
    QCOMPARE(table->gpus(), (std::vector<std::string>{"a100-80gb", "h100-80gb"}));
  }

  // The HF blog's throughput rows contradict each other: the validation shows them but leaves
  // them out of its summary, and so must trust; their memory still counts.
  void inconsistentThroughputIsNotCounted() {
    QTemporaryDir dir;
    const QString path = writeFile(dir, "v.json", R"({"rows": [
        {"gpu": "h100-80gb", "trainer": "hf", "tokens_per_s": {"delta_pct": -10.0}, "throughput_consistent": true},
        {"gpu": "h100-80gb", "trainer": "hf", "memory": {"delta_pct": 20.0},
         "tokens_per_s": {"delta_pct": 80.0}, "throughput_consistent": false},
        {"gpu": "h100-80gb", "trainer": "hf", "step_time_s": {"delta_pct": 90.0}, "throughput_consistent": false}]})");
    const auto table = TrustTable::load(path.toStdString());
    QVERIFY2(table.ok(), qPrintable(messageOf(table)));
    for (const spplan::Accuracy& acc : {table->forGpu("h100-80gb"), table->forTrainer("h100-80gb", "hf")}) {
      QCOMPARE(acc.speed.count, 1);
      QCOMPARE(acc.speed.mean_abs_pct, 10.0);
      QCOMPARE(acc.speed.max_abs_pct, 10.0);
      QCOMPARE(acc.memory.count, 1);
      QCOMPARE(acc.memory.mean_abs_pct, 20.0);
    }
  }

  // Published runs in one file, our own timed runs in another: both count for the GPU, and each
  // trainer's rows give that trainer's accuracy.
  void everyResultsFileInTheFolderCounts() {
    QTemporaryDir dir;
    writeFile(dir, "published.json", R"({"rows": [
        {"gpu": "h100-80gb", "trainer": "arctic", "memory": {"delta_pct": -4.0}, "tokens_per_s": {"delta_pct": 30.0}}]})");
    writeFile(dir, "gpu_h100_measured.json", R"({"rows": [
        {"gpu": "h100-80gb", "trainer": "engine", "memory": {"delta_pct": 2.0}, "step_time_s": {"delta_pct": -4.0}},
        {"gpu": "h100-80gb", "trainer": "engine", "memory": {"delta_pct": -6.0}, "step_time_s": {"delta_pct": 8.0}}]})");
    writeFile(dir, "README.md", "not a results file");
    const auto table = TrustTable::loadDir(dir.path().toStdString());
    QVERIFY2(table.ok(), qPrintable(messageOf(table)));
    const spplan::Accuracy all = table->forGpu("h100-80gb");
    QCOMPARE(all.memory.count, 3);
    QCOMPARE(all.memory.mean_abs_pct, 4.0);
    QCOMPARE(all.speed.count, 3);
    QCOMPARE(all.speed.mean_abs_pct, 14.0);
    QCOMPARE(all.speed.max_abs_pct, 30.0);
    const spplan::Accuracy engine = table->forTrainer("h100-80gb", "engine");
    QCOMPARE(engine.speed.count, 2);
    QCOMPARE(engine.speed.mean_abs_pct, 6.0);
    QCOMPARE(table->trainerText("h100-80gb", "engine"),
             QStringLiteral("engine runs on h100-80gb: memory ±4.0% mean (max 6.0%, 2 runs), speed ±6.0% mean (max 8.0%, 2 runs)"));
    QCOMPARE(table->trainerText("h100-80gb", "liger"), QString());  // no liger rows
    QCOMPARE(table->trainerText("a100-80gb", "engine"), QString());
    QCOMPARE(table->windowText("h100-80gb", "liger"), table->memoryText("h100-80gb") + "   ·   " + table->throughputText("h100-80gb"));
    QCOMPARE(table->windowText("h100-80gb", "engine"), table->windowText("h100-80gb", "liger") + "\n" +
                                                          table->trainerText("h100-80gb", "engine"));
    // A list of files gives the same table as the folder.
    const auto listed = TrustTable::load({dir.filePath("gpu_h100_measured.json").toStdString(),
                                          dir.filePath("published.json").toStdString()});
    QVERIFY2(listed.ok(), qPrintable(messageOf(listed)));
    QCOMPARE(listed->shortText("h100-80gb"), table->shortText("h100-80gb"));
  }

  void badTrustFilesNameFileAndKey() {
    QTemporaryDir dir;
    const QString notJson = writeFile(dir, "a.json", "{");
    QVERIFY(messageOf(TrustTable::load(notJson.toStdString())).startsWith(notJson + ": not a JSON object"));
    const QString regenerate = QStringLiteral("regenerate with scripts/validation-results.sh)");
    const struct { const char* name; QByteArray text; QString expected; } cases[] = {
        {"b.json", R"({"rows": [{"memory": {"delta_pct": 1}}]})",
         ": key \"rows[0].gpu\": missing (allowed: a GPU preset name; " + regenerate},
        {"c.json", R"({"summary": {}})", ": key \"rows\": missing or not an array (allowed: an array of rows)"},
        {"d.json", R"({"rows": [{"gpu": "h100-80gb"}, {"gpu": "h100-80gb", "step_time_s": {"delta_pct": "5%"}}]})",
         ": key \"rows[1].step_time_s.delta_pct\": missing or not a number (allowed: a number, percent; " + regenerate},
        {"e.json", R"({"rows": [{"gpu": "h100-80gb", "memory": 12.5}]})",
         ": key \"rows[0].memory.delta_pct\": missing or not a number (allowed: a number, percent; " + regenerate},
        {"f.json", R"({"rows": [{"gpu": "h100-80gb", "trainer": 3}]})",
         ": key \"rows[0].trainer\": not a string (allowed: a trainer name; " + regenerate},
        {"g.json", R"({"rows": [{"gpu": "h100-80gb", "throughput_consistent": "no"}]})",
         ": key \"rows[0].throughput_consistent\": not true or false (allowed: true, false; " + regenerate},
    };
    for (const auto& c : cases) {
      const QString path = writeFile(dir, c.name, c.text);
      QCOMPARE(messageOf(TrustTable::load(path.toStdString())), path + c.expected);
    }
    // In a folder or a list, the first bad file is named.
    QTemporaryDir folder;
    writeFile(folder, "a_good.json", R"({"rows": []})");
    const QString bad = writeFile(folder, "b_bad.json", R"({"rows": [{"trainer": "hf"}]})");
    QCOMPARE(messageOf(TrustTable::loadDir(folder.path().toStdString())),
             bad + ": key \"rows[0].gpu\": missing (allowed: a GPU preset name; " + regenerate);
    const std::string missing = folder.filePath("missing.json").toStdString();
    QVERIFY(messageOf(TrustTable::load({folder.filePath("a_good.json").toStdString(), missing}))
                .startsWith(QString::fromStdString(missing)));
    QTemporaryDir empty;
    QCOMPARE(messageOf(TrustTable::loadDir(empty.path().toStdString())),
             empty.path() + ": no results file (*.json) in the folder (allowed: a folder written by scripts/validation-results.sh)");
  }

  // Each validation/NAME.csv has validation/results/NAME.json, the same JSON as what the current
  // `spplan validate published NAME.csv --json` prints: else the GUI would show the accuracy of
  // an older cost model. No results file lacks its CSV.
  void shippedResultsFilesAreTodaysReports() {
    const QDir validation(QStringLiteral(SPPLAN_SOURCE_DIR "/validation"));
    const QStringList csvs = validation.entryList({"*.csv"}, QDir::Files, QDir::Name);
    QVERIFY(csvs.contains(QStringLiteral("published_visible.csv")));
    QVERIFY(csvs.contains(QStringLiteral("gpu_h100_measured.csv")));
    QStringList expectedResults;
    for (const QString& csv : csvs) {
      QString name = QFileInfo(csv).completeBaseName();  // published_visible -> published, as the script names it
      if (name.endsWith(QStringLiteral("_visible"))) name.chop(8);
      const QString results = validation.filePath("results/" + name + ".json");
      expectedResults << QFileInfo(results).fileName();
      QProcess process;
      process.start(QStringLiteral(SPPLAN_EXE), {"validate", "published", validation.filePath(csv), "--json"});
      QVERIFY(process.waitForFinished(60000));
      QVERIFY2(process.exitCode() <= 1, qPrintable(process.readAllStandardError()));  // 1: a target missed
      const QJsonObject today = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
      QVERIFY(today.value("rows").isArray());
      QVERIFY2(readJson(results) == today, qPrintable(results + " is stale: run scripts/validation-results.sh and commit it"));
    }
    expectedResults.sort();
    QCOMPARE(QDir(validation.filePath("results")).entryList({"*.json"}, QDir::Files, QDir::Name), expectedResults);
  }

  // The shipped results load; per GPU they count what the validation's own summaries count.
  void shippedResultsMatchTheirSummaries() {
    const auto shipped = TrustTable::loadDir(TrustTable::defaultDir());
    QVERIFY2(shipped.ok(), qPrintable(messageOf(shipped)));
    int memory = 0, speed = 0;
    for (const std::string& gpu : shipped->gpus()) {
      memory += shipped->forGpu(gpu).memory.count;
      speed += shipped->forGpu(gpu).speed.count;
    }
    int summaryMemory = 0, summarySpeed = 0;
    const QDir results(QString::fromStdString(TrustTable::defaultDir()));
    for (const QString& name : results.entryList({"*.json"}, QDir::Files)) {
      const QJsonObject summary = readJson(results.filePath(name)).value("summary").toObject();
      summaryMemory += summary.value("memory_pct").toObject().value("count").toInt();
      summarySpeed += summary.value("throughput_pct").toObject().value("count").toInt();
    }
    QCOMPARE(memory, summaryMemory);
    QCOMPARE(speed, summarySpeed);
    QVERIFY(shipped->forTrainer("h100-80gb", "engine").speed.count > 0);  // the H100 timed runs
  }

  void windowShowsTrustBesidePredictions() {
    MainWindow window;
    GuiOptions options;
    options.model = "qwen3-4b";
    options.gpu = "h100-80gb";
    options.gpus = "4";
    options.seq = "128k";
    window.setInputs(options);
    window.trainerCombo()->setCurrentText(QStringLiteral("engine"));
    window.recomputeNow();
    const auto trust = TrustTable::loadDir(TrustTable::defaultDir());
    QVERIFY(trust.ok());
    QCOMPARE(window.trustLabel()->text(), trust->windowText("h100-80gb", "engine"));
    QVERIFY(window.trustLabel()->text().contains(QStringLiteral("\nengine runs on h100-80gb: ")));
    // Run it runs spplan-engine: its prediction shows the engine's measured accuracy.
    const QString engineText = trust->trainerText("h100-80gb", "engine") + ".";
    bool shown = false;
    for (const QLabel* label : window.tabs()->runPanel()->findChildren<QLabel*>()) shown |= label->text().endsWith(engineText);
    QVERIFY(shown);
  }
};

QTEST_MAIN(TestGuiTrust)
#include "tst_gui_trust.moc"
