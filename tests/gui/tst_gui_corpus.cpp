// spplan-gui's corpus: the Corpus input reads a lengths file with the CLI's reader and packs it at
// the typed sequence length as `spplan plan --lengths` does, so the table's real tokens/s and
// epoch are costmodel::estimate's of that plan and the CLI's own; the banner holds the selected
// plan's epoch; the Corpus tab's histogram holds every document once and its line sits at the
// plan's sequence length; a bad file shows read_lengths_file's line.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/corpus_chart_view.hpp"
#include "gui/corpus_inputs.hpp"
#include "gui/corpus_model.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/plan_tabs.hpp"
#include "gui/session.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/plan_documents.hpp"
#include "planner/costmodel/estimate.hpp"

using namespace spplan;
using namespace spplan::gui;

namespace {

const QString kLongAlpaca = QStringLiteral(SPPLAN_SOURCE_DIR "/validation/corpora/longalpaca-12k.qwen2.5.lengths.csv");

QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  file.write(bytes);
  return path;
}

// The brief's example: qwen2.5-7b on 4 x a100-80gb with usp at `seq`.
void setInputs(MainWindow* window, const char* seq) {
  GuiOptions options;
  options.model = "qwen2.5-7b";
  options.gpu = "a100-80gb";
  options.gpus = "4";
  options.seq = seq;
  window->setInputs(options);
  window->trainerCombo()->setCurrentText("usp");
}

corpus::Corpus readCorpus(const QString& path) {
  auto c = corpus::read_lengths_file(path.toStdString());
  if (!c.ok()) qFatal("%s", c.status().message().c_str());
  return *c;
}

double value(const QAbstractItemModel& model, int row, int column) {
  return model.index(row, column).data(Qt::UserRole).toDouble();
}

// The bins hold every document and token once, in contiguous log-spaced bins, each length in its own.
void checkBins(const CorpusModel& model, const corpus::Corpus& c) {
  double documents = 0, tokens = 0;
  for (int r = 0; r < model.rowCount(); ++r) {
    documents += value(model, r, CorpusModel::DocumentsColumn);
    tokens += value(model, r, CorpusModel::TokensColumn);
    QVERIFY(value(model, r, CorpusModel::LowColumn) < value(model, r, CorpusModel::HighColumn));
    if (r > 0) QCOMPARE(value(model, r, CorpusModel::LowColumn), value(model, r - 1, CorpusModel::HighColumn));
  }
  QCOMPARE(documents, static_cast<double>(c.documents()));
  QCOMPARE(tokens, c.tokens());
  QCOMPARE(model.documents(), c.documents());
  QVERIFY(value(model, 0, CorpusModel::LowColumn) <= static_cast<double>(c.length_counts.front().first));
  QVERIFY(value(model, model.rowCount() - 1, CorpusModel::HighColumn) > static_cast<double>(c.longest()));
}

}  // namespace

class TestGuiCorpus : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings under ~/.qttest, not the user's
    QCoreApplication::setOrganizationName("spplan-test-corpus");
    QCoreApplication::setApplicationName("spplan-gui");
  }

  // Lengths 1, 8, 9 and 100: the bins' edges are ceil(2^(k/4)), so 1 is in [1, 2), 8 and 9 in
  // [8, 10) (2^3 and 2^3.25 = 9.51), 100 in [91, 108) (2^6.5 = 90.5, 2^6.75 = 107.6); the bins
  // between are kept, empty, and those narrower than a token (2^0.25 .. 2^1 all round up to 2) are not.
  void binsAreLogSpacedByHand() {
    CorpusModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const corpus::Corpus c = corpus::corpus_of({1, 8, 9, 100});
    model.setCorpus(c, corpus::Packing::kBfd, 64, corpus::pack(c, 64, corpus::Packing::kBfd));
    checkBins(model, c);
    QCOMPARE(value(model, 0, CorpusModel::LowColumn), 1.0);
    QCOMPARE(value(model, 0, CorpusModel::HighColumn), 2.0);
    QCOMPARE(value(model, 0, CorpusModel::DocumentsColumn), 1.0);
    QCOMPARE(value(model, 1, CorpusModel::LowColumn), 2.0);  // [2, 3): empty, kept
    QCOMPARE(value(model, 1, CorpusModel::DocumentsColumn), 0.0);
    // 1 2 3 4 5 6 7 8: [8, 10) is the eighth bin.
    QCOMPARE(value(model, 7, CorpusModel::LowColumn), 8.0);
    QCOMPARE(value(model, 7, CorpusModel::HighColumn), 10.0);
    QCOMPARE(value(model, 7, CorpusModel::DocumentsColumn), 2.0);
    const int last = model.rowCount() - 1;
    QCOMPARE(value(model, last, CorpusModel::LowColumn), 91.0);
    QCOMPARE(value(model, last, CorpusModel::HighColumn), 108.0);
    QCOMPARE(value(model, last, CorpusModel::TokensColumn), 100.0);
    QCOMPARE(model.longerDocuments(), int64_t{1});
    QCOMPARE(model.longerText(), QStringLiteral("1 document (25.0%) longer than the sequence: cut into pieces, each trained apart"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(!model.hasCorpus());
  }

  // The table's numbers are costmodel::estimate's of each plan with the documents packed as
  // apply_corpus packs them, the first row's the CLI's own (--json), and the banner says its epoch.
  void tablePricesTheEpochAsTheCli() {
    MainWindow window;
    setInputs(&window, "64k");
    window.corpusInputs()->setPath(kLongAlpaca);
    window.corpusInputs()->epochsSpin()->setValue(3);
    window.recomputeNow();
    QVERIFY2(window.planModel()->anyFits(), qPrintable(window.statusLabel()->text()));
    QVERIFY(window.planModel()->hasCorpus());
    const corpus::Corpus c = readCorpus(kLongAlpaca);
    const PlanTableModel& model = *window.planModel();
    for (int r = 0; r < std::min(model.rowCount(), 5); ++r) {
      PlanSpec plan = model.planAt(r).plan;
      plan.documents = {};
      plan.packed_documents = false;
      corpus::pack_into_plan(c, corpus::Packing::kBfd, &plan);
      QVERIFY(plan.packed_documents);
      const costmodel::Estimate e = costmodel::estimate(plan);
      QVERIFY(e.epoch_s > 0);
      QCOMPARE(value(model, r, PlanTableModel::RealTokensPerSecondColumn), e.real_tokens_per_s);
      QCOMPARE(value(model, r, PlanTableModel::EpochColumn), e.epoch_s);
      QCOMPARE(value(model, r, PlanTableModel::UsdPerEpochColumn), e.usd_per_epoch);
      QCOMPARE(model.index(r, PlanTableModel::EpochColumn).data().toString(), QString::fromStdString(duration_text(e.epoch_s)));
    }
    // In place of tokens/s and $/Mtok, as the CLI's table.
    QVERIFY(window.planTable()->isColumnHidden(PlanTableModel::TokensPerSecondColumn));
    QVERIFY(window.planTable()->isColumnHidden(PlanTableModel::UsdPerMtokColumn));
    QVERIFY(!window.planTable()->isColumnHidden(PlanTableModel::EpochColumn));
    QVERIFY(!window.planTable()->isColumnHidden(PlanTableModel::UsdPerEpochColumn));
    QVERIFY(!window.planTable()->isColumnHidden(PlanTableModel::RealTokensPerSecondColumn));

    QProcess cli;
    cli.start(QStringLiteral(SPPLAN_EXE), {"plan", "--model", "qwen2.5-7b", "--gpu", "a100-80gb", "--gpus", "4", "--trainer",
                                           "usp", "--seq", "64k", "--lengths", kLongAlpaca, "--top", "1", "--json"});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject best = QJsonDocument::fromJson(cli.readAllStandardOutput()).object()["plans"].toArray()[0].toObject()["corpus"].toObject();
    QCOMPARE(value(model, 0, PlanTableModel::EpochColumn), best["epoch_s"].toDouble());
    QCOMPARE(value(model, 0, PlanTableModel::UsdPerEpochColumn), best["usd_per_epoch"].toDouble());
    QCOMPARE(value(model, 0, PlanTableModel::RealTokensPerSecondColumn), best["real_tokens_per_s"].toDouble());

    const costmodel::Estimate& e = model.planAt(window.selectedRow()).estimate;
    const QString epoch = QStringLiteral("epoch: ") + QString::fromStdString(duration_text(e.epoch_s)) + ", $" +
                          QString::number(e.usd_per_epoch, 'f', 2) + "; 3 epochs: " +
                          QString::fromStdString(duration_text(3 * e.epoch_s)) + ", $" +
                          QString::number(3 * e.usd_per_epoch, 'f', 2);
    QVERIFY2(window.bannerLabel()->text().contains(epoch), qPrintable(window.bannerLabel()->text() + " / " + epoch));
    QVERIFY(window.bannerLabel()->text().contains("real tokens/s"));

    // The Corpus tab: every document once, the line at the plan's length.
    CorpusModel* corpusModel = window.tabs()->corpusModel();
    QAbstractItemModelTester tester(corpusModel, QAbstractItemModelTester::FailureReportingMode::QtTest);
    checkBins(*corpusModel, c);
    QCOMPARE(corpusModel->seqLen(), model.planAt(0).plan.seq_len);
    QCOMPARE(window.tabs()->corpusChart()->sequenceLineX(), 65536.0);
    QVERIFY(window.tabs()->corpusChart()->titleText().contains("11,998 documents"));
    // 5 of longalpaca's documents are longer than 64k (spplan plan says so too).
    QCOMPARE(corpusModel->longerDocuments(), int64_t{5});
    QVERIFY2(window.tabs()->corpusChart()->sequenceLineName().contains("5 documents (0.042%) longer than the sequence"),
             qPrintable(window.tabs()->corpusChart()->sequenceLineName()));

    // Cleared: the plain plan again, the CLI's columns without --lengths, the tab's empty state.
    window.corpusInputs()->clearButton()->click();
    window.recomputeNow();
    QVERIFY(!window.planModel()->hasCorpus());
    QVERIFY(window.planModel()->planAt(0).plan.documents.empty());
    QVERIFY(!window.planTable()->isColumnHidden(PlanTableModel::TokensPerSecondColumn));
    QVERIFY(window.planTable()->isColumnHidden(PlanTableModel::EpochColumn));
    QVERIFY(!window.bannerLabel()->text().contains("epoch"));
    QCOMPARE(corpusModel->rowCount(), 0);
    QVERIFY(window.tabs()->corpusChart()->titleText().startsWith("No corpus"));
    QCOMPARE(window.tabs()->corpusChart()->sequenceLineX(), 0.0);
  }

  // At 1280 x 800 with a corpus the table has 16 columns; the durations ("33 min 37 s") are its
  // widest cells and stay whole (an even share of the width cut them to "31 min 5...").
  void durationsStayWholeAt1280x800() {
    MainWindow window;
    GuiOptions options;  // docs/gui.md's corpus screenshot: epochs of "31 min 54 s"
    options.model = "qwen2.5-7b";
    options.gpu = "h100-80gb";
    options.gpus = "8";
    options.seq = "32k";
    window.setInputs(options);
    window.corpusInputs()->setPath(kLongAlpaca);
    window.resize(1280, 800);
    window.show();
    window.recomputeNow();
    QCoreApplication::processEvents();
    QTableView* table = window.planTable();
    const PlanTableModel& model = *window.planModel();
    QVERIFY(model.rowCount() > 0);
    // A cell draws its text inside a margin on each side (QCommonStyle: the focus frame's plus one).
    const int margins = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
    for (int c : {PlanTableModel::StepSecondsColumn, PlanTableModel::EpochColumn}) {
      for (int r = 0; r < std::min(model.rowCount(), 10); ++r) {
        const QString text = model.index(r, c).data().toString();
        QVERIFY2(table->fontMetrics().horizontalAdvance(text) + margins <= table->columnWidth(c),
                 qPrintable(QStringLiteral("%1 in %2 px").arg(text).arg(table->columnWidth(c))));
      }
    }
  }

  // A corpus written here, at 16k with packing none: the longer documents are cut at the
  // sequence's end, the plan's documents are not packed, and the line moves with the length typed.
  void packingNoneAndTheTypedLength() {
    QTemporaryDir dir;
    const QString path = writeFile(dir, "lengths.csv", "length,count\n1000,30\n12000,10\n40000,2\n");
    MainWindow window;
    setInputs(&window, "16k");
    window.corpusInputs()->setPath(path);
    window.corpusInputs()->packingCombo()->setCurrentText("none");
    window.recomputeNow();
    QVERIFY2(window.planModel()->rowCount() > 0, qPrintable(window.statusLabel()->text()));
    const PlanSpec& plan = window.planModel()->planAt(0).plan;
    QCOMPARE(plan.seq_len, int64_t{16384});
    QVERIFY(!plan.packed_documents);
    QCOMPARE(plan.documents.sequences, int64_t{42});  // one document a sequence
    const corpus::Corpus c = readCorpus(path);
    checkBins(*window.tabs()->corpusModel(), c);
    // 2 x (40,000 - 16,384) = 47,232 tokens past the sequence's end.
    QVERIFY2(window.tabs()->corpusChart()->sequenceLineName().contains(
                 "2 documents (4.8%) longer than the sequence: cut at the sequence's end, 47,232 tokens not trained"),
             qPrintable(window.tabs()->corpusChart()->sequenceLineName()));
    QCOMPARE(window.tabs()->corpusChart()->sequenceLineX(), 16384.0);
    window.seqEdit()->setText("48k");
    window.recomputeNow();
    QCOMPARE(window.tabs()->corpusChart()->sequenceLineX(), 49152.0);
    QCOMPARE(window.tabs()->corpusModel()->longerDocuments(), int64_t{0});
    QCOMPARE(window.tabs()->corpusChart()->sequenceLineName().contains("no document is longer than the sequence"), true);
  }

  // Bad lengths files: the status line is read_lengths_file's message, word for word, and no plan.
  void badLengthsFileShowsTheReadersLine_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("a word") << QByteArray("length\nabc\n");
    QTest::newRow("zero") << QByteArray("0\n");
    QTest::newRow("negative count") << QByteArray("length,count\n100,-3\n");
    QTest::newRow("empty") << QByteArray("");
    QTest::newRow("json string") << QByteArray("[\"x\"]");
  }
  void badLengthsFileShowsTheReadersLine() {
    QFETCH(QByteArray, bytes);
    QTemporaryDir dir;
    const QString path = writeFile(dir, "bad.csv", bytes);
    const auto read = corpus::read_lengths_file(path.toStdString());
    QVERIFY(!read.ok());
    MainWindow window;
    setInputs(&window, "64k");
    window.corpusInputs()->setPath(path);
    window.recomputeNow();
    QCOMPARE(window.statusLabel()->text(), QString::fromStdString(read.status().message()));
    QCOMPARE(window.planModel()->rowCount(), 0);
    QCOMPARE(window.tabs()->corpusModel()->rowCount(), 0);
  }
  void missingLengthsFileShowsTheReadersLine() {
    QTemporaryDir dir;
    const QString path = dir.filePath("gone.csv");
    MainWindow window;
    setInputs(&window, "64k");
    window.corpusInputs()->setPath(path);
    window.recomputeNow();
    QCOMPARE(window.statusLabel()->text(), QString::fromStdString(corpus::read_lengths_file(path.toStdString()).status().message()));
  }

  // The session keeps the lengths file, the packing and the epochs, and reads the file again.
  void sessionKeepsTheCorpus() {
    QSettings().clear();
    {
      MainWindow window;
      setInputs(&window, "64k");
      window.corpusInputs()->setPath(kLongAlpaca);
      window.corpusInputs()->packingCombo()->setCurrentText("wrapped");
      window.corpusInputs()->epochsSpin()->setValue(2);
      QSettings settings;
      saveSession(settings, window.sessionState());
    }
    MainWindow restored;
    QVERIFY(restored.restoreSession());
    QCOMPARE(restored.corpusInputs()->path(), kLongAlpaca);
    QCOMPARE(restored.corpusInputs()->packing(), corpus::Packing::kWrapped);
    QCOMPARE(restored.corpusInputs()->epochs(), 2);
    QVERIFY(restored.corpusInputs()->corpus() != nullptr);
    // Cleared, nothing of it is kept.
    restored.corpusInputs()->setPath(QString());
    QSettings settings;
    saveSession(settings, restored.sessionState());
    QVERIFY(loadSession(settings).corpus.empty());
    QSettings().clear();
  }
};

QTEST_MAIN(TestGuiCorpus)
#include "tst_gui_corpus.moc"
