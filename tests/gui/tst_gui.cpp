// spplan-gui: the plan model against the search, the model's contract (QAbstractItemModelTester),
// the CLI's error text for bad input, and the --screenshot / bad-flag behaviour of the binary.
#include <cmath>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/export_bar.hpp"
#include "gui/gui_options.hpp"
#include "gui/knob_pins.hpp"
#include "gui/main_window.hpp"
#include "gui/optimizer_inputs.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/seq_sweep_model.hpp"
#include "gui/stack_choices.hpp"
#include "planner/accuracy/memory_verdict.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/knobs_json.hpp"
#include "planner/corpus/corpus.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/costmodel/priced_model.hpp"
#include "planner/search/explain.hpp"
#include "planner/search/knob_constraints.hpp"
#include "planner/search/search.hpp"

#include "tests/gui/fixtures.hpp"

using spplan::gui::PlanTableModel;
using spplan::gui::SeqSweepModel;

namespace {

using spplan::gui::testing::knownBase;
using spplan::gui::testing::knownOptions;

// `spplan ARGS`: its stdout; a test failure if it does not exit 0.
QByteArray cliOutput(const QStringList& args) {
  QProcess process;
  process.start(QStringLiteral(SPPLAN_EXE), args);
  if (!process.waitForFinished(60000) || process.exitCode() != 0) {
    qWarning("spplan %s: exit %d: %s", qPrintable(args.join(' ')), process.exitCode(),
             process.readAllStandardError().constData());
    return {};
  }
  return process.readAllStandardOutput();
}

// `spplan ARGS`'s one-line message without its "spplan: " prefix; a test failure if it does not exit 2.
QString cliRefusal(const QStringList& args) {
  QProcess process;
  process.start(QStringLiteral(SPPLAN_EXE), args);
  if (!process.waitForFinished(60000) || process.exitCode() != 2) {
    qWarning("spplan %s: exit %d, not 2", qPrintable(args.join(' ')), process.exitCode());
    return {};
  }
  return QString::fromUtf8(process.readAllStandardError()).trimmed().remove(0, QStringLiteral("spplan: ").size());
}

QByteArray fileText(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class TestGui : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void planModelPassesModelTester() {
    PlanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    spplan::PlanSpec base = knownBase();
    model.setBase(base);
    QVERIFY(model.rowCount() > 0);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    base.model = *spplan::load_model("llama-3.1-70b");  // nothing fits: the closest failures are listed
    base.cluster.gpu = *spplan::load_gpu("a100-40gb");
    base.cluster.num_gpus = 1;
    base.seq_len = 4 * 1024 * 1024;
    model.setBase(base);
    QVERIFY(!model.anyFits());
    QVERIFY(model.rowCount() > 0);
    QCOMPARE(model.data(model.index(0, PlanTableModel::RankColumn)).toString(), QStringLiteral("no fit"));
  }

  // A header click sorts by the column's value; the rank stays each plan's, a selection follows
  // its plan, and the order holds through the next search.
  void planTableSortsByAColumnAndKeepsRanks() {
    PlanTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBase(knownBase());
    QVERIFY(model.rowCount() > 2);
    QPersistentModelIndex best(model.index(0, PlanTableModel::SpColumn));
    const auto peak = [&](int r) {
      return model.data(model.index(r, PlanTableModel::PeakGibColumn), PlanTableModel::ValueRole).toDouble();
    };
    model.sort(PlanTableModel::PeakGibColumn, Qt::AscendingOrder);
    for (int r = 1; r < model.rowCount(); ++r) QVERIFY(peak(r - 1) <= peak(r));
    QCOMPARE(model.data(model.index(best.row(), PlanTableModel::RankColumn)).toInt(), 1);
    QVERIFY(model.data(model.index(0, PlanTableModel::RankColumn)).toInt() >= 1);
    model.sort(PlanTableModel::PeakGibColumn, Qt::DescendingOrder);
    for (int r = 1; r < model.rowCount(); ++r) QVERIFY(peak(r - 1) >= peak(r));
    model.setBase(knownBase());
    for (int r = 1; r < model.rowCount(); ++r) QVERIFY(peak(r - 1) >= peak(r));
    model.sort(PlanTableModel::RankColumn, Qt::AscendingOrder);
    for (int r = 0; r < model.rowCount(); ++r) QCOMPARE(model.data(model.index(r, PlanTableModel::RankColumn)).toInt(), r + 1);
    model.sort(PlanTableModel::TiledColumn, Qt::AscendingOrder);  // a text column: by its words
    for (int r = 1; r < model.rowCount(); ++r) {
      QVERIFY(model.data(model.index(r - 1, PlanTableModel::TiledColumn)).toString() <=
              model.data(model.index(r, PlanTableModel::TiledColumn)).toString());
    }
  }

  // Host memory per node beside what the plan may use, and the NVMe it fills when it swaps there
  // (often what decides what to rent): the plan table, What to rent and the Memory tab's line.
  void hostMemoryShowsNvmeWhenThePlanSwapsThere() {
    spplan::costmodel::Estimate e;
    e.host.optimizer_bytes = 96.0 * 1024 * 1024 * 1024;
    e.host_capacity_bytes = 1710.0 * 1024 * 1024 * 1024;
    QCOMPARE(spplan::gui::hostMemoryText(e), QStringLiteral("96 / 1710"));
    e.host.nvme_bytes = 1530.0 * 1024 * 1024 * 1024;
    QCOMPARE(spplan::gui::hostMemoryText(e), QStringLiteral("96 / 1710 + 1,530 NVMe"));
    QCOMPARE(spplan::gui::hostMemoryDetail(e),
             QStringLiteral("Host memory per node: 96.0 of 1710 GiB usable (optimizer state 96.0, parameters 0.0, "
                            "checkpoints 0.0); NVMe per node: 1530.0 GiB (what ZeRO-Infinity swaps to the drives)"));
  }

  void sweepModelPassesModelTester() {
    SeqSweepModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const spplan::search::SearchResult result = spplan::search::search_plans(knownBase(), false);
    QVERIFY(!result.feasible.empty());
    model.setPlan(result.feasible[0].plan);
    QCOMPARE(model.rowCount(), 6);  // seq/8 .. 4 x seq, doubling
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void rowsFollowSearchRanking() {
    const spplan::search::SearchResult result = spplan::search::search_plans(knownBase(), false);
    PlanTableModel model;
    model.setBase(knownBase());
    QCOMPARE(model.rowCount(), static_cast<int>(result.feasible.size()));
    QCOMPARE(model.data(model.index(0, PlanTableModel::TokensPerSecondColumn), PlanTableModel::ValueRole).toDouble(),
             result.feasible[0].estimate.tokens_per_s);
    for (int r = 0; r < model.rowCount(); ++r) {
      const auto& expected = result.feasible[static_cast<size_t>(r)];
      QCOMPARE(model.data(model.index(r, PlanTableModel::RankColumn)).toInt(), r + 1);
      QCOMPARE(model.data(model.index(r, PlanTableModel::SpColumn)).toLongLong(), expected.plan.knobs.sp);
      QCOMPARE(model.data(model.index(r, PlanTableModel::CpColumn)).toLongLong(), expected.plan.knobs.cp);
      QCOMPARE(model.data(model.index(r, PlanTableModel::ZeroColumn)).toLongLong(), expected.plan.knobs.zero_stage);
      QCOMPARE(model.data(model.index(r, PlanTableModel::PeakGibColumn), PlanTableModel::ValueRole).toDouble(),
               expected.estimate.memory.needed_bytes() / (1024.0 * 1024.0 * 1024.0));
    }
  }

  // The engine near the device's limit (the H200 lease of 30 November: qwen3-0.6b ran 73,728
  // tokens, validation/gpu/h200-141gb-2026-11-30): the table shows what the step needs, which fits,
  // not the peak with the whole slack allowance a run reserves when memory is plentiful (145.9 GiB
  // of 140.4), and its categories add up to it.
  void engineNearTheLimitShowsWhatItNeeds() {
    spplan::PlanSpec base = knownBase();
    base.model = *spplan::load_model("qwen3-0.6b");
    base.cluster.gpu = *spplan::load_gpu("h200-141gb");
    base.cluster.num_gpus = 1;
    base.seq_len = 73728;
    base.stack = *spplan::load_trainer("engine");
    PlanTableModel model;
    model.setBase(base);
    QVERIFY(model.rowCount() > 0);
    const auto value = [&](int r, int column) { return model.data(model.index(r, column), PlanTableModel::ValueRole).toDouble(); };
    bool gaveBack = false;
    for (int r = 0; r < model.rowCount(); ++r) {
      const auto& e = model.planAt(r).estimate;
      gaveBack = gaveBack || e.memory.slack_given_back_bytes > 0;
      const double peak = value(r, PlanTableModel::PeakGibColumn);
      QCOMPARE(peak, e.memory.needed_bytes() / (1024.0 * 1024.0 * 1024.0));
      QVERIFY(peak <= value(r, PlanTableModel::CapacityGibColumn));
      double sum = 0;
      for (int c : {PlanTableModel::ParamsGibColumn, PlanTableModel::GradsGibColumn, PlanTableModel::OptimizerGibColumn,
                    PlanTableModel::ActivationsGibColumn, PlanTableModel::LogitsGibColumn, PlanTableModel::BuffersGibColumn,
                    PlanTableModel::OverheadGibColumn}) {
        sum += value(r, c);
      }
      QVERIFY(std::abs(sum - peak) < 1e-6 * peak);
    }
    QVERIFY(gaveBack);
  }

  void windowShowsBestPlanAndItsSweep() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    const spplan::search::SearchResult result = spplan::search::search_plans(knownBase(), false);
    QCOMPARE(window.planModel()->rowCount(), static_cast<int>(result.feasible.size()));
    QVERIFY(window.bannerLabel()->text().startsWith(QStringLiteral("Fits: best plan ")));
    // The sweep's point at the input length is the selected plan's own peak.
    const SeqSweepModel* sweep = window.sweepModel();
    QCOMPARE(sweep->rowCount(), 6);
    QCOMPARE(sweep->data(sweep->index(3, SeqSweepModel::SeqKiloColumn)).toDouble(), 128.0);
    QCOMPARE(sweep->data(sweep->index(3, SeqSweepModel::PeakGibColumn)).toDouble(),
             window.planModel()->data(window.planModel()->index(0, PlanTableModel::PeakGibColumn),
                                      PlanTableModel::ValueRole).toDouble());
  }

  void badSeqShowsCliMessageAndClearsTable() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(window.planModel()->rowCount() > 0);
    window.seqEdit()->clear();
    QTest::keyClicks(window.seqEdit(), QStringLiteral("12x"));
    const QString expected = QString::fromStdString(spplan::parse_seq_len("--seq", "12x").status().message());
    QTRY_COMPARE(window.statusLabel()->text(), expected);  // after the debounce timer
    QCOMPARE(window.planModel()->rowCount(), 0);
    QCOMPARE(window.sweepModel()->rowCount(), 0);
    QVERIFY(window.bannerLabel()->text().isEmpty());
    window.seqEdit()->setText(QStringLiteral("1.5M"));  // a good value brings the results back
    QTRY_VERIFY(window.planModel()->rowCount() > 0);
  }

  // The GUI's best plan, saved and exported, is the CLI's for the same inputs, optimizer
  // settings included (the cited recipe, then the same plan with an edited learning rate).
  void savedPlanAndExportsEqualTheClis() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.trainerCombo()->setCurrentText(QStringLiteral("hf"));  // a trainer with three formats
    window.recomputeNow();
    QTemporaryDir dir;
    const QStringList inputs{"--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "128k",
                             "--trainer", "hf"};
    for (const QString& lr : {QString(), QStringLiteral("2e-5")}) {
      if (!lr.isEmpty()) {
        window.optimizerInputs()->field("lr")->setText(lr);
        window.recomputeNow();
      }
      const QString gui = dir.filePath("gui" + lr + ".toml"), cli = dir.filePath("cli" + lr + ".toml");
      QVERIFY(window.savePlanTo(gui).is_ok());
      QStringList args = QStringList{"plan"} + inputs + QStringList{"--out", cli};
      if (!lr.isEmpty()) args << "--lr" << lr;
      cliOutput(args);
      QVERIFY(!fileText(cli).isEmpty());
      QCOMPARE(fileText(gui), fileText(cli));
      QCOMPARE(spplan::load_plan(gui.toStdString())->optimizer.lr, lr.isEmpty() ? spplan::fine_tuning_recipe().lr : 2e-5);
      int same = 0;
      for (const std::string format : {"torchrun", "accelerate", "deepspeed"}) {  // hf's formats
        const QString path = dir.filePath(QString::fromStdString(format) + lr);
        QProcess cliExport;
        cliExport.start(QStringLiteral(SPPLAN_EXE), {"export", "--plan", cli, "--format", QString::fromStdString(format)});
        QVERIFY(cliExport.waitForFinished(60000));
        const spplan::Status exported = window.exportBar()->exportTo(format, path);
        if (cliExport.exitCode() == 0) {  // the same file
          QVERIFY2(exported.is_ok(), exported.message().c_str());
          // The one difference: a script names the plan file the CLI exported from, where the GUI,
          // exporting its selected plan, names the placeholder (export.hpp: plan_path "").
          QCOMPARE(fileText(path), QString::fromUtf8(cliExport.readAllStandardOutput()).replace(cli, "PLAN.toml").toUtf8());
          ++same;
        } else {  // the same refusal (a ring plan on DeepSpeed's formats)
          QCOMPARE(cliExport.exitCode(), 2);
          QVERIFY(!exported.is_ok());
          QVERIFY2(QString::fromUtf8(cliExport.readAllStandardError()).contains(QString::fromStdString(exported.message())),
                   exported.message().c_str());
        }
      }
      QVERIFY(same > 0);
    }
    // A bad value: the CLI's message, and no results.
    window.optimizerInputs()->field("lr")->setText(QStringLiteral("fast"));
    window.recomputeNow();
    QProcess cli;  // the CLI's line for the same value, less its "spplan: " prefix
    cli.start(QStringLiteral(SPPLAN_EXE), QStringList{"plan"} + inputs + QStringList{"--lr", "fast"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 2);
    QCOMPARE("spplan: " + window.statusLabel()->text() + "\n", QString::fromUtf8(cli.readAllStandardError()));
    QCOMPARE(window.planModel()->rowCount(), 0);
  }

  // A plan that fits by less than the measured memory error is amber and says so; the same plan
  // held against no error would be green. Llama-3.1-8B on 2 x 6 H100s at 128K: the fastest plan
  // uses 79.3 of 79.6 GiB, inside the H100's largest measured memory error, so safe first puts a
  // safe plan in row 1 (green) and names the risky one in the banner; "speed alone" (--risky) puts
  // it back in row 1, amber.
  void bannerIsAmberInsideTheMeasuredError() {
    spplan::gui::MainWindow window;
    spplan::gui::GuiOptions options;
    options.model = "llama-3.1-8b";
    options.gpu = "h100-80gb";
    options.gpus = "12";
    options.gpusPerNode = "6";
    options.seq = "128k";
    window.setInputs(options);
    window.recomputeNow();
    QVERIFY(window.planModel()->rowCount() > 0);
    QVERIFY2(window.bannerLabel()->text().startsWith(QStringLiteral("Fits: best plan ")), qPrintable(window.bannerLabel()->text()));
    QVERIFY2(window.bannerLabel()->text().endsWith(
                 QStringLiteral("fastest risky plan: 24% faster than the best safe plan, 0.4% free against a 14.8% measured error")),
             qPrintable(window.bannerLabel()->text()));
    QCOMPARE(window.planModel()->data(window.planModel()->index(0, PlanTableModel::GroupColumn)).toString(), QStringLiteral("safe"));
    window.findChild<QCheckBox*>(QStringLiteral("pin-risky"))->setChecked(true);
    window.recomputeNow();
    QCOMPARE(window.planModel()->data(window.planModel()->index(0, PlanTableModel::GroupColumn)).toString(), QStringLiteral("risky"));
    QVERIFY2(window.bannerLabel()->text().startsWith(QStringLiteral("Fits inside the measured error: best plan ")),
             qPrintable(window.bannerLabel()->text()));
    QVERIFY(window.bannerLabel()->text().contains(QStringLiteral("it may not fit when it runs")));
    QVERIFY(window.bannerLabel()->styleSheet().contains(QStringLiteral("#fff1b8")));
    const auto& best = window.planModel()->planAt(0);
    spplan::ErrorStats none;
    QCOMPARE(spplan::memory_verdict(best.estimate, none, "h100-80gb").verdict, spplan::Verdict::kFits);
    // The known case has room to spare: green.
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(window.bannerLabel()->text().startsWith(QStringLiteral("Fits: best plan ")));
    QVERIFY(window.bannerLabel()->styleSheet().contains(QStringLiteral("#d6f0d6")));
  }

  // The price and the headroom are inputs, read by the CLI's flag parsers: the price
  // moves every $ figure and the status line; the headroom leaves memory free; bad values get the
  // CLI's words and clear the results.
  void priceAndHeadroomFieldsAreTheClisFlags() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    const double fileUsd = window.planModel()->data(window.planModel()->index(0, PlanTableModel::UsdPerMtokColumn),
                                                    PlanTableModel::ValueRole).toDouble();
    const double filePrice = spplan::load_gpu("h100-80gb")->price_per_gpu_hour;
    QCOMPARE(window.priceEdit()->placeholderText(), QString::number(filePrice, 'f', 2));
    window.priceEdit()->setText(QStringLiteral("6"));
    window.recomputeNow();
    const double paidUsd = window.planModel()->data(window.planModel()->index(0, PlanTableModel::UsdPerMtokColumn),
                                                    PlanTableModel::ValueRole).toDouble();
    QVERIFY(std::fabs(paidUsd / fileUsd - 6.0 / filePrice) < 1e-9);
    QVERIFY2(window.statusLabel()->text().contains(QStringLiteral("$24.00 per hour at $6.00 per GPU-hour")),
             qPrintable(window.statusLabel()->text()));
    window.headroomEdit()->setText(QStringLiteral("40"));
    window.recomputeNow();
    for (int row = 0; row < window.planModel()->rowCount(); ++row) {
      const auto& e = window.planModel()->planAt(row).estimate;
      if (e.fits) QVERIFY(e.memory.total_bytes() <= 0.6 * e.capacity_bytes);
    }
    window.headroomEdit()->setText(QStringLiteral("70"));
    window.recomputeNow();
    QCOMPARE(window.statusLabel()->text(),
             QString::fromStdString(spplan::parse_double("--headroom", "70", 0.0, 50.0).status().message()));
    QCOMPARE(window.planModel()->rowCount(), 0);
  }

  // A cluster the CLI refuses gets the CLI's words here too (it once said "Does not
  // fit: no valid knob set"), and the results go.
  void partNodeClusterShowsTheClisMessage() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(window.planModel()->rowCount() > 0);
    window.perNodeSpin()->setValue(8);
    window.gpusSpin()->setValue(12);
    window.recomputeNow();
    spplan::ClusterSpec cluster;
    cluster.gpu.gpus_per_node = 8;
    cluster.num_gpus = 12;
    const spplan::Status cli = spplan::check_cluster_shape(cluster, spplan::flag_where);
    QVERIFY(!cli.is_ok());
    QCOMPARE(window.statusLabel()->text(), QString::fromStdString(cli.message()));
    QCOMPARE(window.planModel()->rowCount(), 0);
  }

  // Pinned knobs are the CLI's knob flags: every ranked plan keeps them and the
  // best is spplan plan's best with those flags; a pin the cluster refuses, or one that leaves
  // nothing to price, gets the CLI's line and clears the results.
  void pinnedKnobsAreTheClisFlags() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.knobPins()->combo("zero")->setCurrentText(QStringLiteral("3"));
    window.knobPins()->combo("tiled-mlp")->setCurrentText(QStringLiteral("off"));
    window.recomputeNow();
    QVERIFY(window.planModel()->fitCount() > 0);
    for (int row = 0; row < window.planModel()->rowCount(); ++row) {
      const auto& k = window.planModel()->planAt(row).plan.knobs;
      QCOMPARE(k.zero_stage, 3);
      QVERIFY(!k.tiled_mlp);
    }
    // The CLI's search with the same flags: the same best plan.
    spplan::PlanSpec base = window.planModel()->planAt(0).plan;
    base.knobs = spplan::Knobs{};
    const auto args = spplan::Args::parse({"--zero", "3", "--no-tiled-mlp"}, spplan::search::searched_knob_flag_specs());
    QVERIFY(args.ok());
    const auto constraints = spplan::search::read_constraints(*args, &base);
    QVERIFY(constraints.ok());
    const auto cli = spplan::search::search_plans(base, false, *constraints);
    QVERIFY(!cli.feasible.empty());
    QCOMPARE(spplan::knobs_json(window.planModel()->planAt(0).plan.knobs).dump(),
             spplan::knobs_json(cli.feasible.front().plan.knobs).dump());

    window.knobPins()->clearPins();
    window.knobPins()->combo("sp")->setCurrentText(QStringLiteral("256"));  // 4 GPUs
    window.recomputeNow();
    QVERIFY2(window.statusLabel()->text().startsWith(QStringLiteral("--sp: value 256 is not valid for qwen3-4b")),
             qPrintable(window.statusLabel()->text()));
    QCOMPARE(window.planModel()->rowCount(), 0);

    window.knobPins()->clearPins();
    window.knobPins()->combo("cp")->setCurrentText(QStringLiteral("2"));  // arctic runs no ring
    window.recomputeNow();
    QVERIFY2(window.statusLabel()->text().startsWith(QStringLiteral("--cp: value 2 makes the layout ring (sp 1, cp 2), "
                                                                    "which trainer \"arctic\" does not run")),
             qPrintable(window.statusLabel()->text()));
    QCOMPARE(window.planModel()->rowCount(), 0);
    window.knobPins()->clearPins();
    window.recomputeNow();
    QVERIFY(window.planModel()->fitCount() > 0);
  }

  // The ranking rule (rank column's tooltip) and why the layout won (the status
  // line), as spplan plan prints them.
  void rankingRuleAndWhyThisLayoutAreShown() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    const auto result = spplan::search::search_plans(window.planModel()->planAt(0).plan, false);
    QVERIFY2(window.statusLabel()->text().endsWith(
                 QStringLiteral("\nwhy this layout: ") + QString::fromStdString(spplan::search::layout_reason(result))),
             qPrintable(window.statusLabel()->text()));
    QVERIFY(window.planModel()->headerData(PlanTableModel::RankColumn, Qt::Horizontal, Qt::ToolTipRole).toString()
                .endsWith(QString::fromLatin1(spplan::search::kRankingRule)));
  }

  // The model line says what the costmodel prices the selected plan's model as, in the words
  // `spplan estimate` prints for the same plan (a mixture here: its experts and router).
  void modelLineIsTheEstimatesReport() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.modelCombo()->setCurrentText(QStringLiteral("qwen3-30b-a3b"));
    window.gpusSpin()->setValue(8);
    window.recomputeNow();
    QVERIFY(window.planModel()->fitCount() > 0);
    const spplan::PlanSpec& plan = window.planModel()->planAt(0).plan;
    const auto lines = spplan::costmodel::priced_model_lines(plan);
    QVERIFY(lines.mixture.starts_with("mixture: 128 experts 768 wide, 8 a token"));
    QVERIFY2(window.modelLabel()->text().contains(QString::fromStdString(lines.mixture)),
             qPrintable(window.modelLabel()->text()));
    QVERIFY(window.modelLabel()->text().startsWith(QString::fromStdString(lines.rope)));
    // The lines of a mixture depend on the model alone: the estimate of the plan's layout has them.
    const QByteArray report = cliOutput({"estimate", "--model", "qwen3-30b-a3b", "--gpu", "h100-80gb", "--gpus", "8",
                                         "--seq", "128k", "--sp", QString::number(plan.knobs.sp)});
    for (const std::string& line : lines.present()) {
      QVERIFY2(report.contains(QByteArray::fromStdString("\n  " + line + "\n")), line.c_str());
    }
    window.modelCombo()->setCurrentText(QStringLiteral("no-such-model"));  // an error clears it
    window.recomputeNow();
    QVERIFY(window.modelLabel()->text().isEmpty());
  }

  // The attention choice is --attention: every plan on the named kernel, the CLI's best plan for the
  // same flags, and the CLI's refusal where the trainer does not run it (hf's ring: SDPA only).
  void attentionChoiceIsTheClisFlag() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.trainerCombo()->setCurrentText(QStringLiteral("hf"));
    window.stackChoices()->setTexts({{"attention", "sdpa"}});
    window.recomputeNow();
    QVERIFY(window.planModel()->fitCount() > 0);
    for (int row = 0; row < window.planModel()->rowCount(); ++row) {
      QVERIFY(window.planModel()->planAt(row).plan.stack.attention == spplan::AttentionKernel::kSdpa);
    }
    const QByteArray cli = cliOutput({"plan", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq",
                                      "128k", "--trainer", "hf", "--attention", "sdpa", "--json"});
    const auto best = nlohmann::json::parse(cli.toStdString())["plans"][0];
    QCOMPARE(spplan::knobs_json(window.planModel()->planAt(0).plan.knobs).dump(), best["knobs"].dump());
    QCOMPARE(window.planModel()->planAt(0).estimate.tokens_per_s, best["tokens_per_s"].get<double>());
    // FlashAttention 2 named: hf's ring is refused in the CLI's words, its Ulysses plans stay.
    window.stackChoices()->setTexts({{"attention", "flash2"}});
    window.knobPins()->combo("cp")->setCurrentText(QStringLiteral("4"));
    window.recomputeNow();
    QCOMPARE(window.planModel()->rowCount(), 0);
    QCOMPARE(window.statusLabel()->text(),
             cliRefusal({"plan", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "128k",
                         "--trainer", "hf", "--attention", "flash2", "--cp", "4"}));
    window.knobPins()->clearPins();
    window.recomputeNow();
    QVERIFY(window.planModel()->fitCount() > 0);
    for (int row = 0; row < window.planModel()->rowCount(); ++row) {
      QCOMPARE(window.planModel()->planAt(row).plan.knobs.cp, 1LL);
      QVERIFY(window.planModel()->planAt(row).plan.stack.attention == spplan::AttentionKernel::kFlash2);
    }
  }

  // The encoders' choice is --freeze-encoders / --train-encoders: off for a text model, and for a
  // multimodal one the CLI's search, its words and its refusal (ArcticTraining freezes nothing).
  void encodersChoiceIsTheClisFlag() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(!window.stackChoices()->combo("encoders")->isEnabled());
    const QString gemma = QStringLiteral(SPPLAN_SOURCE_DIR "/tests/planner/config/data/gemma3_4b_multimodal.json");
    window.modelCombo()->setCurrentText(gemma);
    window.trainerCombo()->setCurrentText(QStringLiteral("usp"));
    window.recomputeNow();
    QVERIFY(window.stackChoices()->combo("encoders")->isEnabled());
    QCOMPARE(window.stackChoices()->combo("encoders")->currentText(), QStringLiteral("trainer's: frozen"));
    QVERIFY2(window.modelLabel()->text().contains(QStringLiteral("parameters frozen by usp (weights only")),
             qPrintable(window.modelLabel()->text()));
    const auto peakOfBest = [&] {
      return window.planModel()->data(window.planModel()->index(0, PlanTableModel::PeakGibColumn),
                                      PlanTableModel::ValueRole).toDouble();
    };
    const spplan::search::RankedPlan frozenBest = window.planModel()->planAt(0);
    window.stackChoices()->setTexts({{"encoders", "trained"}});
    window.recomputeNow();
    QVERIFY(!window.planModel()->planAt(0).plan.stack.freezes_encoders);
    QVERIFY2(window.modelLabel()->text().contains(QStringLiteral("parameters counted as trained")),
             qPrintable(window.modelLabel()->text()));
    // The CLI's search with --train-encoders: the same best plan and peak.
    spplan::PlanSpec base = window.planModel()->planAt(0).plan;
    base.knobs = spplan::Knobs{};
    const auto cli = spplan::search::search_plans(base, false);
    QVERIFY(!cli.feasible.empty());
    QCOMPARE(spplan::knobs_json(window.planModel()->planAt(0).plan.knobs).dump(),
             spplan::knobs_json(cli.feasible.front().plan.knobs).dump());
    // The frozen best plan's knobs, trained: gradients and optimizer state for 0.42B more parameters
    spplan::PlanSpec trained = window.planModel()->planAt(0).plan;
    trained.knobs = frozenBest.plan.knobs;
    // (safe first may pick other knobs for the heavier model; offloaded, the state grows on the host).
    const auto held = [](const spplan::costmodel::Estimate& e) { return e.memory.needed_bytes() + e.host.total_bytes(); };
    QVERIFY(held(spplan::costmodel::estimate(trained)) > held(frozenBest.estimate));
    QVERIFY(peakOfBest() > 0);

    window.trainerCombo()->setCurrentText(QStringLiteral("arctic"));
    window.stackChoices()->setTexts({{"encoders", "frozen"}});
    window.recomputeNow();
    QCOMPARE(window.stackChoices()->combo("encoders")->itemText(0), QStringLiteral("trainer's: trained"));
    QVERIFY2(window.statusLabel()->text().contains(QStringLiteral("--freeze-encoders: value true is not run by trainer "
                                                                  "\"arctic\"")),
             qPrintable(window.statusLabel()->text()));
    QCOMPARE(window.planModel()->rowCount(), 0);
  }

  void badModelShowsLoaderMessage() {
    spplan::gui::MainWindow window;
    window.setInputs(knownOptions());
    window.modelCombo()->setCurrentText(QStringLiteral("no-such-model"));
    window.recomputeNow();
    QCOMPARE(window.statusLabel()->text(),
             QString::fromStdString(spplan::load_model("no-such-model").status().message()));
    QCOMPARE(window.planModel()->rowCount(), 0);
  }

  void screenshotWritesPngOfRequestedSize() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("gui.png"));
    QProcess process;
    process.start(QStringLiteral(SPPLAN_GUI_EXE), {"--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4",
                                                   "--seq", "128k", "--screenshot", png});
    QVERIFY(process.waitForFinished(60000));
    QCOMPARE(process.exitCode(), 0);
    QVERIFY(QFileInfo(png).size() > 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1280, 800));
  }

  void badFlagsExitTwoWithOneLine() {
    const struct { QStringList args; std::string message; } cases[] = {
        {{"--gpus", "abc"}, spplan::parse_int("--gpus", "abc", 1, 1 << 24).status().message()},
        {{"--seq", "12x"}, spplan::parse_seq_len("--seq", "12x").status().message()},
        {{"--bogus"}, "--bogus: unknown flag (allowed: --model, --gpu, --gpus, --gpus-per-node, --seq, --lengths, --packing, "
                      "--screenshot, --screenshots)"},
        // The corpus flags in `spplan plan`'s words (cli/corpus_flags.cpp).
        {{"--lengths", "/nonexistent/lengths.csv"}, spplan::corpus::read_lengths_file("/nonexistent/lengths.csv").status().message()},
        {{"--lengths", SPPLAN_SOURCE_DIR "/validation/corpora/longalpaca-12k.qwen2.5.lengths.csv", "--packing", "zip"},
         spplan::corpus::parse_packing("--packing", "zip").status().message()},
        {{"--packing", "bfd"}, "--packing: needs --lengths (allowed: with a corpus's lengths file)"},
    };
    for (const auto& c : cases) {
      QProcess process;
      process.start(QStringLiteral(SPPLAN_GUI_EXE), c.args);
      QVERIFY(process.waitForFinished(60000));
      QCOMPARE(process.exitCode(), 2);
      QCOMPARE(QString::fromUtf8(process.readAllStandardError()),
               "spplan-gui: " + QString::fromStdString(c.message) + "\n");
    }
  }

  // --help, -h and --version answer and exit, with no window (before this, -h opened one).
  void helpAndVersionExitWithoutAWindow() {
    for (const QString& flag : {QStringLiteral("--help"), QStringLiteral("-h")}) {
      QProcess process;
      process.start(QStringLiteral(SPPLAN_GUI_EXE), {flag});
      QVERIFY(process.waitForFinished(20000));
      QCOMPARE(process.exitCode(), 0);
      const QString out = QString::fromUtf8(process.readAllStandardOutput());
      QVERIFY2(out.startsWith("usage: spplan-gui "), qPrintable(out));
      for (const spplan::FlagSpec& f : spplan::gui::guiFlagSpecs()) {
        QVERIFY2(out.contains(QString::fromStdString("--" + f.name + " V")), f.name.c_str());
        QVERIFY2(!f.help.empty() && !f.allowed.empty() && !f.default_value.empty(), f.name.c_str());
      }
    }
    QProcess process;
    process.start(QStringLiteral(SPPLAN_GUI_EXE), {"--version"});
    QVERIFY(process.waitForFinished(20000));
    QCOMPARE(process.exitCode(), 0);
    QVERIFY(QString::fromUtf8(process.readAllStandardOutput()).startsWith("spplan-gui 0."));
  }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
