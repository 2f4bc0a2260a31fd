// spplan-gui's views of the selected plan: the simulated step timeline, what to rent, SP scaling,
// the exports (plan formats, chart images), the saved session, keyboard shortcuts and the
// --screenshots mode (the measured accuracy beside the predictions: tst_gui_trust). Numbers are
// checked against the library calls the CLI makes.
#include <algorithm>
#include <cmath>

#include <QAbstractItemModelTester>
#include <memory>
#include <QComboBox>
#include <QFontMetricsF>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QLogValueAxis>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QTableView>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QtTest>

#include "gui/charts.hpp"
#include "gui/export_bar.hpp"
#include "gui/image_export.hpp"
#include "gui/knob_pins.hpp"
#include "gui/main_window.hpp"
#include "gui/optimizer_inputs.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/plan_tabs.hpp"
#include "gui/rent_chart_view.hpp"
#include "gui/rent_model.hpp"
#include "gui/seq_sweep_model.hpp"
#include "gui/session.hpp"
#include "gui/stack_choices.hpp"
#include "gui/sp_scaling_chart_view.hpp"
#include "gui/sp_scaling_model.hpp"
#include "gui/step_timeline_view.hpp"
#include "gui/trust.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/trainer_rules.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"
#include "planner/export/export.hpp"
#include "planner/search/search.hpp"
#include "simulator/op_words.hpp"
#include "simulator/simulate.hpp"
#include "simulator/trace_json.hpp"

#include "tests/gui/fixtures.hpp"

using namespace spplan::gui;

namespace {

using spplan::gui::testing::knownBase;
using spplan::gui::testing::knownOptions;

spplan::search::RankedPlan bestPlan() { return spplan::search::search_plans(knownBase(), false).feasible.at(0); }

}  // namespace

class TestGuiViews : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings under ~/.qttest, not the user's
    QCoreApplication::setOrganizationName("spplan-test");
    QCoreApplication::setApplicationName("tst_gui_views");
    QSettings().clear();
    QVERIFY2(QSettings().fileName().contains(".qttest"), qPrintable(QSettings().fileName()));
  }

  void timelineIsTheSimulatorsStep() {
    const auto best = bestPlan();
    StepTimelineView view;
    view.resize(900, 300);
    view.setPlan(best.plan, best.estimate.capacity_bytes);
    const spplan::sim::SimResult expected = spplan::sim::simulate_plan(best.plan, spplan::sim::Mode::kOverlap);
    QVERIFY(view.result() != nullptr);
    QCOMPARE(view.result()->step_time_s, expected.step_time_s);
    QCOMPARE(view.result()->events.size(), expected.events.size());
    QVERIFY(view.exposedText().contains(
        QStringLiteral("all-to-all %1 s").arg(expected.exposed_comm_s.a2a_s, 0, 'f', 3)));
    QVERIFY(view.exposedText().contains(QStringLiteral("ZeRO %1 s").arg(expected.exposed_comm_s.zero_s, 0, 'f', 3)));
    // The memory lane's labels: the capacity line named with its value, the peak in words, never
    // the op id (such as "gather.m0.rec.L30").
    QCOMPARE(view.capacityLabel(), QStringLiteral("capacity %1 GiB").arg(best.estimate.capacity_bytes / spplan::kGiB, 0, 'f', 1));
    QCOMPARE(view.peakWhere(), QString::fromStdString(spplan::sim::op_in_words(expected.peak_op)));
    QVERIFY2(view.peakLabel().startsWith(QStringLiteral("peak %1 GiB: ").arg(expected.peak_memory_bytes / spplan::kGiB, 0, 'f', 1)),
             qPrintable(view.peakLabel()));
    if (!expected.peak_op.empty()) {
      QVERIFY2(!view.peakLabel().contains(QString::fromStdString(expected.peak_op)), qPrintable(view.peakLabel()));
      QVERIFY2(view.peakLabel().contains(QStringLiteral("layer")) || view.peakLabel().contains(QStringLiteral("optimizer")) ||
                   view.peakLabel().contains(QStringLiteral("loss")),
               qPrintable(view.peakLabel()));
    }
    QVERIFY(view.exposedText().endsWith(view.peakWhere()));
    // Durations and axis labels people read (not "28149.939 s" or "1e+04 s").
    QVERIFY2(view.exposedText().startsWith(
                 QStringLiteral("step %1 simulated").arg(QString::fromStdString(spplan::duration_text(expected.step_time_s)))),
             qPrintable(view.exposedText()));
    QCOMPARE(StepTimelineView::tickText(15000, 5000), QStringLiteral("15,000 s"));
    QCOMPARE(StepTimelineView::tickText(0.25, 0.05), QStringLiteral("0.25 s"));
    QCOMPARE(StepTimelineView::tickText(0.004, 0.002), QStringLiteral("0.004 s"));
    QCOMPARE(StepTimelineView::tickText(2, 1), QStringLiteral("2 s"));
    // Zoom: the span halves around the middle, keys and reset; never past the step.
    QCOMPARE(view.viewSpanS(), expected.step_time_s);
    view.zoomBy(4);
    QCOMPARE(view.viewSpanS(), expected.step_time_s / 4);
    QCOMPARE(view.viewStartS(), expected.step_time_s * 3 / 8);
    QTest::keyClick(&view, Qt::Key_Minus);
    QCOMPARE(view.viewSpanS(), expected.step_time_s / 2);
    QTest::keyClick(&view, Qt::Key_0);
    QCOMPARE(view.viewStartS(), 0.0);
    view.zoomBy(0.1);
    QCOMPARE(view.viewSpanS(), expected.step_time_s);
  }

  // The timeline is a tool, not a picture: phase marks, a tooltip per box in words, a Perfetto
  // trace as spplan simulate --trace writes it, lane names unclipped.
  void timelineMarksPhasesNamesBoxesAndExportsTheTrace() {
    const auto best = bestPlan();
    StepTimelineView view;
    QTemporaryDir dir;
    QCOMPARE(QString::fromStdString(view.exportTrace(dir.filePath("none.json")).message()),
             QStringLiteral("export trace: no simulated step (allowed: select a plan that fits)"));
    view.resize(900, 300);
    view.setPlan(best.plan, best.estimate.capacity_bytes);
    const auto& marks = view.phaseMarks();
    QStringList labels;
    for (const auto& m : marks) labels << QString::fromStdString(m.words);
    QCOMPARE(labels.first(), QStringLiteral("forward"));
    QVERIFY2(labels.indexOf(QStringLiteral("backward")) > 0, qPrintable(labels.join(" | ")));
    QCOMPARE(labels.last(), QStringLiteral("optimizer"));
    for (size_t i = 1; i < marks.size(); ++i) QVERIFY(marks[i - 1].time_s <= marks[i].time_s);
    // The longest compute box, found by its middle.
    const spplan::sim::SimEvent* longest = nullptr;
    for (const auto& e : view.result()->events) {
      if (StepTimelineView::laneOf(e) != StepTimelineView::ComputeLane) continue;
      if (!longest || e.end_s - e.start_s > longest->end_s - longest->start_s) longest = &e;
    }
    QVERIFY(longest != nullptr);
    const QRectF lanes = view.lanesRect();
    QVERIFY(lanes.left() >= QFontMetricsF(view.font()).horizontalAdvance(QStringLiteral("all-to-all / ring")));
    const double middle = 0.5 * (longest->start_s + longest->end_s);
    const QPointF at(lanes.left() + (middle - view.viewStartS()) / view.viewSpanS() * lanes.width(),
                     lanes.top() + 0.5 * lanes.height() / static_cast<int>(StepTimelineView::LaneCount));
    const spplan::sim::SimEvent* found = view.eventAt(at);
    QVERIFY(found != nullptr);
    QCOMPARE(StepTimelineView::laneOf(*found), StepTimelineView::ComputeLane);
    QVERIFY(found->start_s <= middle + view.viewSpanS() / lanes.width() && found->end_s >= middle - view.viewSpanS() / lanes.width());
    const QString text = StepTimelineView::eventText(*found);
    QVERIFY2(text.startsWith(QString::fromStdString(spplan::sim::op_in_words(found->name)) + " (" +
                             QString::fromStdString(found->name) + "): "),
             qPrintable(text));
    QVERIFY(view.eventAt(QPointF(1, at.y())) == nullptr);  // the lane names, not a box
    QVERIFY(view.exportTrace(dir.filePath("step.json")).is_ok());
    QFile trace(dir.filePath("step.json"));
    QVERIFY(trace.open(QIODevice::ReadOnly));
    QCOMPARE(trace.readAll().toStdString(), spplan::sim::chrome_trace_json(*view.result()));
  }

  // The peak-vs-sequence axis counts M past 4M tokens ("16M", not "16384k").
  void seqChartCountsMillionsPastFourM() {
    auto plan = bestPlan().plan;
    SeqSweepModel model;
    SeqChartView chart(&model);
    model.setPlan(plan);  // 128K: k
    QCOMPARE(chart.seqAxis()->labelFormat(), QStringLiteral("%gk"));
    plan.seq_len = int64_t{16} << 20;
    model.setPlan(plan);
    QCOMPARE(chart.seqAxis()->labelFormat(), QStringLiteral("%gM"));
    QVERIFY(chart.seqAxis()->max() < 100);  // in M: 64M x 1.3 at most
    QCOMPARE(model.index(0, SeqSweepModel::SeqMegaColumn).data().toDouble(), 2.0);  // 16M / 8
  }

  void timelineLanes() {
    using spplan::sim::OpCategory;
    using spplan::sim::Resource;
    const struct { Resource resource; OpCategory category; StepTimelineView::Lane lane; } cases[] = {
        {Resource::kCompute, OpCategory::kCompute, StepTimelineView::ComputeLane},
        {Resource::kCompute, OpCategory::kOptimizer, StepTimelineView::ComputeLane},
        {Resource::kComm, OpCategory::kA2a, StepTimelineView::A2aLane},
        {Resource::kComm, OpCategory::kZero, StepTimelineView::ZeroLane},
        {Resource::kH2D, OpCategory::kOffload, StepTimelineView::OffloadLane},
        {Resource::kD2H, OpCategory::kOffload, StepTimelineView::OffloadLane},
        {Resource::kHost, OpCategory::kOptimizer, StepTimelineView::HostLane},
    };
    for (const auto& c : cases) {
      spplan::sim::SimEvent e;
      e.resource = c.resource;
      e.category = c.category;
      QCOMPARE(StepTimelineView::laneOf(e), c.lane);
    }
  }

  // The rent table is priced off the GUI thread: the call returns at once, a later call
  // supersedes one still running, and the rows end as the last call's, equal to pricing it there.
  void rentPricedOffTheGuiThreadEndsAsTheLastCall() {
    RentModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy priced(&model, &RentModel::priced);
    spplan::PlanSpec base = knownBase();
    base.model = *spplan::load_model("qwen3-0.6b");
    base.seq_len = 32 * 1024;
    spplan::PlanSpec last = base;
    last.seq_len = 64 * 1024;
    model.setBaseAsync(base);
    QVERIFY(model.isPricing());
    model.setBaseAsync(last);  // while the first runs: asked next, the first's result dropped
    QTRY_VERIFY_WITH_TIMEOUT(!model.isPricing(), 60000);
    QCOMPARE(priced.count(), 1);
    RentModel direct;
    direct.setBase(last);
    QCOMPARE(model.rowCount(), direct.rowCount());
    for (int r = 0; r < model.rowCount(); ++r) {
      for (int c : {RentModel::UsdPerMtokColumn, RentModel::MaxSeqColumn, RentModel::TokensPerSecondColumn}) {
        QCOMPARE(model.index(r, c).data(RentModel::ValueRole), direct.index(r, c).data(RentModel::ValueRole));
      }
    }
    model.setBaseAsync(base);
    model.finishPricing();  // waits and shows, as the screenshots do
    QVERIFY(!model.isPricing());
    QCOMPARE(priced.count(), 2);
    QCOMPARE(model.index(0, RentModel::MaxSeqColumn).data(RentModel::ValueRole),
             [&] { RentModel at; at.setBase(base); return at.index(0, RentModel::MaxSeqColumn).data(RentModel::ValueRole); }());
    model.setBaseAsync(last);  // destroyed while pricing: ~RentModel waits for its worker
  }

  // The quickstart's case at 1280 x 800: the plan table shows ten rows whole (the charts give way),
  // each with its group.
  void tenPlanRowsAreVisibleAt1280x800() {
    MainWindow window;
    window.setInputs(knownOptions());
    window.resize(1280, 800);
    window.show();
    window.recomputeNow();
    QCoreApplication::processEvents();
    QCOMPARE(window.size(), QSize(1280, 800));
    QTableView* table = window.planTable();
    QVERIFY(window.planModel()->rowCount() >= 10);
    QVERIFY2(table->rowViewportPosition(9) + table->rowHeight(9) <= table->viewport()->height(),
             qPrintable(QStringLiteral("row 10 ends at %1 of %2 px").arg(table->rowViewportPosition(9) + table->rowHeight(9))
                            .arg(table->viewport()->height())));
    QVERIFY(!table->isColumnHidden(PlanTableModel::GroupColumn));
    QCOMPARE(window.planModel()->headerData(PlanTableModel::GroupColumn, Qt::Horizontal).toString(), QStringLiteral("group"));
  }

  // What to rent sorts by $ per million tokens until a header click sorts by another column; options
  // where nothing fits stay last; each row says its best plan's group.
  void rentTableSortsByPriceAndByAnyColumn() {
    MainWindow window;
    spplan::gui::GuiOptions options = knownOptions();
    options.model = "qwen3-0.6b";  // small: the rent searches stay quick
    options.seq = "32k";
    window.setInputs(options);
    window.tabs()->setCurrentIndex(PlanTabs::RentTab);
    window.recomputeNow();
    window.tabs()->rentModel()->finishPricing();
    QTableView* table = window.tabs()->rentTable();
    QAbstractItemModel* shown = table->model();
    QVERIFY(shown->rowCount() > 10);
    const auto value = [&](int row, int column) { return shown->index(row, column).data(RentModel::ValueRole).toDouble(); };
    for (int r = 1; r < shown->rowCount(); ++r) {
      if (std::isnan(value(r, RentModel::UsdPerMtokColumn))) continue;
      QVERIFY(!std::isnan(value(r - 1, RentModel::UsdPerMtokColumn)));  // no fit last
      QVERIFY(value(r - 1, RentModel::UsdPerMtokColumn) <= value(r, RentModel::UsdPerMtokColumn));
    }
    QCOMPARE(shown->index(0, RentModel::GroupColumn).data().toString(), QStringLiteral("safe"));
    table->sortByColumn(RentModel::TokensPerSecondColumn, Qt::DescendingOrder);  // a header click
    for (int r = 1; r < shown->rowCount(); ++r) {
      if (std::isnan(value(r, RentModel::TokensPerSecondColumn))) continue;
      QVERIFY(value(r - 1, RentModel::TokensPerSecondColumn) >= value(r, RentModel::TokensPerSecondColumn));
    }
  }

  // The batch pin is --global-batch: every plan trains that many sequences per step.
  void globalBatchPinIsTheClisFlag() {
    MainWindow window;
    window.setInputs(knownOptions());
    window.knobPins()->globalBatchSpin()->setValue(16);
    QCOMPARE(window.knobPins()->flags(), (std::vector<std::string>{"--global-batch", "16"}));
    window.recomputeNow();
    QVERIFY(window.planModel()->rowCount() > 0);
    for (int r = 0; r < window.planModel()->rowCount(); ++r) {
      QCOMPARE(spplan::search::global_batch(window.planModel()->planAt(r).plan), int64_t{16});
    }
  }

  // Closing the window while What to rent prices: the worker reads its own copies (the trust table
  // the window owns dies first), and the model waits for it.
  void closingTheWindowWhileRentPricesIsSafe() {
    auto window = std::make_unique<MainWindow>();
    window->setInputs(knownOptions());
    window->tabs()->setCurrentIndex(PlanTabs::RentTab);
    window->recomputeNow();
    QVERIFY(window->tabs()->rentModel()->isPricing());
    window.reset();
  }

  void rentRowsAreTheSearchesPerGpuAndShape() {
    RentModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    spplan::PlanSpec base = knownBase();
    base.model = *spplan::load_model("qwen3-0.6b");  // small: the 15 max-seq searches stay quick
    base.seq_len = 32 * 1024;
    model.setBase(base);
    const auto presets = spplan::gpu_presets();
    // Every preset x node shape, and the user's own 4 H100s (not a whole node of 8) as the last row.
    QCOMPARE(model.rowCount(), static_cast<int>(presets.size() * RentModel::nodeShapeCount()) + 1);
    const int own = model.rowCount() - 1;
    QVERIFY(model.isOwnRow(own));
    QCOMPARE(model.index(own, RentModel::GpusColumn).data().toLongLong(), 4);
    QVERIFY(model.index(own, RentModel::MarkColumn).data().toString().contains("your GPUs"));
    double cheapest = 1e300, fastest = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
      spplan::PlanSpec plan = base;
      plan.cluster.gpu = *spplan::load_gpu(model.index(r, RentModel::GpuColumn).data().toString().toStdString());
      plan.cluster.num_gpus = model.index(r, RentModel::GpusColumn).data().toLongLong();
      if (!model.isOwnRow(r)) {
        QCOMPARE(plan.cluster.num_gpus, model.index(r, RentModel::NodesColumn).data().toLongLong() * plan.cluster.gpu.gpus_per_node);
      }
      const auto result = spplan::search::search_plans(plan, false);
      QVERIFY(!result.feasible.empty());
      const auto& e = result.feasible[0].estimate;
      QCOMPARE(model.index(r, RentModel::UsdPerMtokColumn).data(RentModel::ValueRole).toDouble(), e.usd_per_million_tokens);
      QCOMPARE(model.index(r, RentModel::StepSecondsColumn).data(RentModel::ValueRole).toDouble(), e.time.step_time_s);
      QCOMPARE(model.index(r, RentModel::ChartUsdPerMtokColumn).data().toDouble(), e.usd_per_million_tokens);
      QCOMPARE(model.index(r, RentModel::MaxSeqColumn).data(RentModel::ValueRole).toLongLong(),
               spplan::search::max_seq_searched(plan, 1024)->plan.seq_len);
      cheapest = std::min(cheapest, e.usd_per_million_tokens);
      fastest = std::max(fastest, e.tokens_per_s);
    }
    QCOMPARE(model.index(model.cheapestRow(), RentModel::UsdPerMtokColumn).data(RentModel::ValueRole).toDouble(), cheapest);
    QCOMPARE(model.index(model.fastestRow(), RentModel::TokensPerSecondColumn).data(RentModel::ValueRole).toDouble(), fastest);
    QVERIFY(model.index(model.cheapestRow(), RentModel::MarkColumn).data().toString().contains("cheapest"));
    QVERIFY(model.index(model.fastestRow(), RentModel::MarkColumn).data().toString().contains("fastest"));
    RentChartView chart(&model);  // the chart marks the same two rows' bars, and only those
    QList<int> marked = chart.markedBars();
    std::sort(marked.begin(), marked.end());
    QList<int> expected{model.cheapestRow(), model.fastestRow()};
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    QCOMPARE(marked, expected);
    // Bars sorted by value, the best on top (the last): $/Mtok descending upward, no-fit rows first.
    const auto chartValue = [&](int row, int column) { return model.index(row, column).data().toDouble(); };
    const QList<int>& order = chart.barOrder();
    QCOMPARE(order.size(), model.rowCount());
    for (int i = 1; i < order.size(); ++i) {
      const double below = chartValue(order[i - 1], RentModel::ChartUsdPerMtokColumn);
      const double above = chartValue(order[i], RentModel::ChartUsdPerMtokColumn);
      QVERIFY(below <= 0 || (above > 0 && above <= below));
    }
    QCOMPARE(order.last(), model.cheapestRow());
    chart.setMetricColumn(RentModel::ChartMaxSeqKiloColumn);
    QCOMPARE(chart.markedBars().size(), expected.size());
    for (int i = 1; i < chart.barOrder().size(); ++i) {  // the longest sequence on top
      QVERIFY(chartValue(chart.barOrder()[i - 1], RentModel::ChartMaxSeqKiloColumn) <=
              chartValue(chart.barOrder()[i], RentModel::ChartMaxSeqKiloColumn));
    }
    // Max-seq with its margin: the measured memory error on that GPU (validation/results).
    const auto trust = spplan::gui::TrustTable::loadDir(spplan::gui::TrustTable::defaultDir());
    QVERIFY2(trust.ok(), trust.ok() ? "" : trust.status().message().c_str());
    model.setTrust(&*trust);
    const double margin = trust->forGpu("h100-80gb").memory.mean_abs_pct;
    QVERIFY(trust->forGpu("h100-80gb").memory.count > 0);
    const qlonglong ownMaxSeq = model.index(own, RentModel::MaxSeqColumn).data(RentModel::ValueRole).toLongLong();
    QCOMPARE(model.index(own, RentModel::MaxSeqColumn).data().toString(),
             QString::fromStdString(spplan::seq_text(ownMaxSeq)) + QStringLiteral(" ±%1%").arg(margin, 0, 'f', 0));
    // Durations as people read them (h and min), and a preset extending another (a800-80gb
    // on a100-80gb) shows the measured error of the one it is measured as.
    const double step = model.index(own, RentModel::StepSecondsColumn).data(RentModel::ValueRole).toDouble();
    QCOMPARE(model.index(own, RentModel::StepSecondsColumn).data().toString(), QString::fromStdString(spplan::duration_text(step)));
    for (int r = 0; r < model.rowCount(); ++r) {
      if (model.index(r, RentModel::GpuColumn).data().toString() != QStringLiteral("a800-80gb")) continue;
      QCOMPARE(model.index(r, RentModel::TrustColumn).data().toString(), trust->shortText("a100-80gb"));
    }
  }

  // $/Mtok and other small numbers keep three significant digits, never "0.000".
  void significantDigits() {
    const struct { double value; const char* text; } rows[] = {
        {0.000412345, "0.000412"}, {0.0123, "0.0123"}, {1.23456, "1.23"}, {45.678, "45.7"}, {1234.5, "1235"}, {0, "0"}};
    for (const auto& r : rows) QCOMPARE(spplan::gui::significantText(r.value, 3), QString::fromLatin1(r.text));
  }

  // Every visible column of both tables says what it means in its header's tooltip.
  void columnHeadersHaveTooltips() {
    RentModel rent;
    for (int c = 0; c < RentModel::VisibleColumnCount; ++c) {
      QVERIFY2(!rent.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty(), qPrintable(QString::number(c)));
    }
    QVERIFY(rent.headerData(RentModel::MaxSeqColumn, Qt::Horizontal, Qt::ToolTipRole).toString().contains("banner"));
    QCOMPARE(rent.headerData(RentModel::MaxSeqColumn, Qt::Horizontal).toString(), QStringLiteral("max seq (any knobs)"));
    spplan::gui::PlanTableModel plans;
    for (int c = 0; c <= spplan::gui::PlanTableModel::UsdPerMtokColumn; ++c) {
      QVERIFY2(!plans.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty(), qPrintable(QString::number(c)));
    }
    QVERIFY(plans.headerData(spplan::gui::PlanTableModel::TiledColumn, Qt::Horizontal, Qt::ToolTipRole).toString().contains("tiled MLP"));
  }

  // An hf plan on an H100 runs SDPA under Ulysses (the search keeps each knob set's best kernel,
  // FlashAttention 2 being the layout's default): the chart at the plan's own degrees is its row.
  void spScalingAtThePlansDegreesIsThePlansRow() {
    spplan::PlanSpec base = knownBase();
    base.stack = spplan::trainer_stack("hf");
    const auto plans = spplan::search::search_plans(base, false).feasible;
    const auto ulysses = std::find_if(plans.begin(), plans.end(), [](const spplan::search::RankedPlan& p) {
      return p.plan.knobs.sp > 1 && p.plan.knobs.cp == 1;
    });
    QVERIFY(ulysses != plans.end());
    QCOMPARE(ulysses->plan.stack.attention, spplan::AttentionKernel::kSdpa);
    SpScalingModel model;
    model.setPlan(ulysses->plan);
    bool seen = false;
    for (int r = 0; r < model.rowCount(); ++r) {
      if (model.index(r, SpScalingModel::SpColumn).data().toLongLong() != ulysses->plan.knobs.sp ||
          model.index(r, SpScalingModel::CpColumn).data().toLongLong() != 1) {
        continue;
      }
      QCOMPARE(model.index(r, SpScalingModel::TokensPerSecondColumn).data(SpScalingModel::ValueRole).toDouble(),
               ulysses->estimate.tokens_per_s);
      seen = true;
    }
    QVERIFY(seen);
  }

  void spScalingIsTheEstimateAtEachSp() {
    SpScalingModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto best = bestPlan();
    model.setPlan(best.plan);
    // Ulysses rows first: the estimate at each valid sp with cp 1.
    int expectedRows = 0;
    for (const int64_t sp : spplan::valid_sp_degrees(best.plan.model, best.plan.cluster.num_gpus)) {
      spplan::PlanSpec at = best.plan;
      at.knobs.sp = sp;
      at.knobs.cp = 1;
      if (!spplan::check_plan(at, spplan::flag_where)) continue;
      const auto e = spplan::costmodel::estimate(at);
      QCOMPARE(model.index(expectedRows, SpScalingModel::SpColumn).data().toLongLong(), sp);
      QCOMPARE(model.index(expectedRows, SpScalingModel::CpColumn).data().toLongLong(), 1LL);
      QCOMPARE(model.index(expectedRows, SpScalingModel::TokensPerSecondColumn).data(SpScalingModel::ValueRole).toDouble(),
               e.tokens_per_s);
      QCOMPARE(model.index(expectedRows, SpScalingModel::PeakGibColumn).data(SpScalingModel::ValueRole).toDouble(),
               spplan::gib(e.memory.total_bytes()));
      ++expectedRows;
    }
    QVERIFY(expectedRows >= 2);
    QCOMPARE(model.rowCountOf(SpScalingModel::Ulysses), expectedRows);
    // Ring rows: sp 1, each valid cp, the same estimate as a plan with those degrees, priced on the
    // trainer that runs ring attention when the plan's own does not (ArcticTraining: Ulysses only).
    QCOMPARE(model.index(0, SpScalingModel::TrainerColumn).data().toString(), QString::fromStdString(best.plan.stack.trainer));
    const int ring = model.firstRow(SpScalingModel::Ring);
    QVERIFY(model.rowCountOf(SpScalingModel::Ring) >= 2);
    for (int r = ring; r < ring + model.rowCountOf(SpScalingModel::Ring); ++r) {
      spplan::PlanSpec at = best.plan;
      at.knobs.sp = 1;
      at.knobs.cp = model.index(r, SpScalingModel::CpColumn).data().toLongLong();
      for (const char* trainer : {"hf", "engine"}) {  // the first trainer that runs a ring at these knobs
        if (spplan::check_plan(at, spplan::flag_where)) break;
        at.stack = spplan::trainer_stack(trainer);
        spplan::settle_layout_attention(&at);  // the kernel its ring runs
      }
      QVERIFY(spplan::check_plan(at, spplan::flag_where));
      QCOMPARE(model.index(r, SpScalingModel::TrainerColumn).data().toString(), QString::fromStdString(at.stack.trainer));
      QCOMPARE(model.planAt(r).stack.trainer, at.stack.trainer);
      QCOMPARE(model.index(r, SpScalingModel::SpColumn).data().toLongLong(), 1LL);
      QCOMPARE(model.index(r, SpScalingModel::TokensPerSecondColumn).data(SpScalingModel::ValueRole).toDouble(),
               spplan::costmodel::estimate(at).tokens_per_s);
    }
    // One number format per column, the CLI's whatever the system locale: tokens/s whole with
    // separators (count_text), GiB to 0.1.
    QCOMPARE(model.index(0, SpScalingModel::TokensPerSecondColumn).data().toString(),
             QString::fromStdString(spplan::count_text(
                 model.index(0, SpScalingModel::TokensPerSecondColumn).data(SpScalingModel::ValueRole).toDouble())));
    QCOMPARE(model.index(0, SpScalingModel::PeakGibColumn).data().toString().section('.', 1).size(), 1);
    const double step = model.index(0, SpScalingModel::StepSecondsColumn).data(SpScalingModel::ValueRole).toDouble();
    QCOMPARE(model.index(0, SpScalingModel::StepSecondsColumn).data().toString(), QString::fromStdString(spplan::duration_text(step)));
  }

  // Each row runs the attention kernel its layout runs on its trainer, as the CLI's estimate of that
  // plan does: the Hugging Face Trainer's Ulysses on FlashAttention 2, its ring (torch's context
  // parallel) on SDPA, where the rows kept the selected plan's kernel.
  void spScalingRowsRunTheirLayoutsKernel() {
    spplan::PlanSpec base = knownBase();
    base.stack = spplan::trainer_stack("hf");
    const auto result = spplan::search::search_plans(base, false);
    QVERIFY(!result.feasible.empty());
    // hf's best ring of 4 (on SDPA): safe first may rank another layout before it.
    const auto bestRing = std::find_if(result.feasible.begin(), result.feasible.end(),
                                   [](const spplan::search::RankedPlan& p) { return p.plan.knobs.cp == 4; });
    QVERIFY(bestRing != result.feasible.end());
    spplan::PlanSpec ulysses = bestRing->plan;
    QVERIFY(ulysses.knobs.cp == 4 && ulysses.stack.attention == spplan::AttentionKernel::kSdpa);
    ulysses.knobs.sp = 4;  // the same knobs on Ulysses: FlashAttention 2
    ulysses.knobs.cp = 1;
    spplan::settle_layout_attention(&ulysses);
    QVERIFY(spplan::check_plan(ulysses, spplan::flag_where));
    QVERIFY(ulysses.stack.attention == spplan::AttentionKernel::kFlash2);
    SpScalingModel model;
    model.setPlan(ulysses);
    const int ring = model.firstRow(SpScalingModel::Ring);
    QVERIFY(model.rowCountOf(SpScalingModel::Ring) >= 2);
    for (int r = ring; r < ring + model.rowCountOf(SpScalingModel::Ring); ++r) {
      const spplan::PlanSpec& at = model.planAt(r);
      QCOMPARE(QString::fromStdString(at.stack.trainer), QStringLiteral("hf"));
      QVERIFY2(at.stack.attention == spplan::AttentionKernel::kSdpa, spplan::to_string(at.stack.attention).c_str());
      spplan::PlanSpec cli = at;  // as `spplan estimate --trainer hf --sp 1 --cp N` settles it
      QVERIFY(spplan::settle_attention(&cli, false, spplan::flag_where).is_ok());
      QCOMPARE(model.index(r, SpScalingModel::TokensPerSecondColumn).data(SpScalingModel::ValueRole).toDouble(),
               spplan::costmodel::estimate(cli).tokens_per_s);
    }
  }

  // A layout priced on another trainer keeps the plan's encoders: Gemma 3 frozen on Axolotl (a
  // ring only) has its Ulysses rows priced on hf, frozen too (the loss untiled, as hf runs it).
  void spScalingKeepsThePlansEncoders() {
    spplan::PlanSpec plan = knownBase();
    plan.model = *spplan::load_model(SPPLAN_SOURCE_DIR "/tests/planner/config/data/gemma3_4b_multimodal.json");
    plan.cluster.num_gpus = 8;
    plan.stack = spplan::trainer_stack("axolotl");
    plan.stack.freezes_encoders = true;
    plan.knobs.sp = 1;
    plan.knobs.zero_stage = 3;
    plan.knobs.act_ckpt = spplan::ActCkpt::kFull;
    plan.knobs.tiled_loss = false;
    QVERIFY(spplan::check_plan(plan, spplan::flag_where));
    SpScalingModel model;
    model.setPlan(plan);
    const int ulysses = model.firstRow(SpScalingModel::Ulysses);
    QVERIFY(model.rowCountOf(SpScalingModel::Ulysses) >= 2);
    for (int r = ulysses; r < ulysses + model.rowCountOf(SpScalingModel::Ulysses); ++r) {
      if (model.planAt(r).knobs.sp == 1) continue;  // no sequence parallelism: axolotl's own
      QCOMPARE(model.planAt(r).stack.trainer, std::string("hf"));
      QVERIFY(model.planAt(r).stack.freezes_encoders);
    }
  }

  void exportButtonsWriteEveryFormat() {
    const auto best = bestPlan();
    ExportBar bar;
    QTemporaryDir dir;
    QCOMPARE(QString::fromStdString(bar.exportTo("deepspeed", dir.filePath("x")).message()),
             QStringLiteral("export: no plan selected (allowed: select a plan that fits)"));
    bar.setPlan(&best.plan);
    for (const std::string& name : spplan::export_format_names()) {
      const QString path = dir.filePath(ExportBar::suggestedFileName(name));
      const auto expected = spplan::export_plan(best.plan, *spplan::parse_export_format(name));
      if (!expected.ok()) {  // a target that cannot express the plan (megatron: tiling): the same line
        QCOMPARE(bar.exportTo(name, path).message(), expected.status().message());
        continue;
      }
      QVERIFY(bar.exportTo(name, path).is_ok());
      QFile file(path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QCOMPARE(file.readAll().toStdString(), *spplan::export_plan(best.plan, *spplan::parse_export_format(name)));
    }
    QCOMPARE(bar.exportTo("yaml", dir.filePath("y")).message(), spplan::parse_export_format("yaml", "--format").status().message());
  }

  // A format that cannot express the plan is greyed before any file is asked
  // for, its tooltip export_plan()'s own reason; with no plan every button is.
  void exportButtonsGreyWhatCannotExpressThePlan() {
    const auto best = bestPlan();
    ExportBar bar;
    const auto button = [&bar](const std::string& name) {
      return bar.findChild<QPushButton*>(QString::fromStdString("export-" + name));
    };
    for (const std::string& name : spplan::export_format_names()) QVERIFY(!button(name)->isEnabled());
    bar.setPlan(&best.plan);
    int greyed = 0, offered = 0;
    for (const std::string& name : spplan::export_format_names()) {
      const auto expected = spplan::export_plan(best.plan, *spplan::parse_export_format(name));
      QCOMPARE(button(name)->isEnabled(), expected.ok());
      if (expected.ok()) {
        ++offered;
        QVERIFY(button(name)->toolTip().startsWith(QStringLiteral("spplan export --format ")));
      } else {
        ++greyed;
        QCOMPARE(button(name)->toolTip(), QString::fromStdString(expected.status().message()));
      }
    }
    QVERIFY(greyed > 0);   // the best plan tiles: megatron has no tiled MLP
    QVERIFY(offered > 0);
    bar.setPlan(nullptr);
    for (const std::string& name : spplan::export_format_names()) QVERIFY(!button(name)->isEnabled());
  }

  void chartsSaveAsPngAndSvg() {
    const auto best = bestPlan();
    StepTimelineView view;
    view.resize(640, 300);
    view.setPlan(best.plan, best.estimate.capacity_bytes);
    QTemporaryDir dir;
    QVERIFY(saveWidgetImage(&view, dir.filePath("t.png")).is_ok());
    QCOMPARE(QImage(dir.filePath("t.png")).size(), QSize(640, 300));
    QVERIFY(saveWidgetImage(&view, dir.filePath("t.svg")).is_ok());
    QFile svg(dir.filePath("t.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QByteArray text = svg.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("compute"));  // the lane names are text in the vector image
    SpScalingModel model;  // a Qt Charts view paints into SVG too
    model.setPlan(best.plan);
    SpScalingChartView chart(&model);
    chart.resize(500, 300);
    QVERIFY(saveWidgetImage(&chart, dir.filePath("c.svg")).is_ok());
    QFile chartSvg(dir.filePath("c.svg"));
    QVERIFY(chartSvg.open(QIODevice::ReadOnly));
    QVERIFY(chartSvg.readAll().contains("tokens/s"));
    QCOMPARE(QString::fromStdString(saveWidgetImage(&view, dir.filePath("t.jpg")).message()),
             dir.filePath("t.jpg") + ": unknown image format (allowed: a path ending in .png or .svg)");
  }

  // Each layout's line names the trainer it is priced on, and the memory axis is
  // framed on the capacity, not on a degree-1 layout's thousand GiB.
  void spScalingChartSaysItsTrainersAndFramesCapacity() {
    auto plan = bestPlan().plan;
    plan.seq_len = int64_t{1} << 20;  // at degree 1 far beyond the device
    SpScalingModel model;
    model.setPlan(plan);
    SpScalingChartView chart(&model);
    double maxGib = 0, capacity = 0;
    for (int r = 0; r < model.rowCount(); ++r) {
      maxGib = std::max(maxGib, model.index(r, SpScalingModel::PeakGibColumn).data(SpScalingModel::ValueRole).toDouble());
      capacity = model.index(r, SpScalingModel::CapacityGibColumn).data(SpScalingModel::ValueRole).toDouble();
    }
    QVERIFY2(maxGib > 2 * SpScalingChartView::kMemoryFrame * capacity, qPrintable(QString::number(maxGib)));
    QVERIFY(chart.memoryAxisMax() >= capacity);
    QVERIFY(chart.memoryAxisMax() <= 2 * SpScalingChartView::kMemoryFrame * capacity);
    int named = 0;
    for (int l = 0; l < SpScalingModel::LayoutCount; ++l) {
      const auto layout = static_cast<SpScalingModel::Layout>(l);
      if (model.rowCountOf(layout) == 0) continue;
      const QString trainer = model.index(model.firstRow(layout), SpScalingModel::TrainerColumn).data().toString();
      QVERIFY2(chart.tokensSeriesName(l).startsWith(QString::fromLatin1(SpScalingModel::layoutName(layout)) + " (") &&
                   chart.tokensSeriesName(l).contains(trainer),
               qPrintable(chart.tokensSeriesName(l)));
      ++named;
    }
    QVERIFY(named >= 2);
  }

  void sessionComesBackAfterClose() {
    {
      MainWindow window;
      window.setInputs(knownOptions());
      window.seqEdit()->setText("256k");
      window.gpusSpin()->setValue(8);
      // The renter's price, headroom and optimizer come back too.
      window.priceEdit()->setText("2.5");
      window.headroomEdit()->setText("10");
      window.optimizerInputs()->field("lr")->setText("2e-5");
      window.knobPins()->combo("zero")->setCurrentText("3");
      window.knobPins()->combo("tiled-mlp")->setCurrentText("off");
      window.stackChoices()->setTexts({{"attention", "sdpa"}, {"encoders", "frozen"}});
      window.close();  // closeEvent saves
    }
    MainWindow again;
    QVERIFY(again.restoreSession());
    QCOMPARE(again.modelCombo()->currentText(), QStringLiteral("qwen3-4b"));
    QCOMPARE(again.gpuCombo()->currentText(), QStringLiteral("h100-80gb"));
    QCOMPARE(again.gpusSpin()->value(), 8);
    QCOMPARE(again.seqEdit()->text(), QStringLiteral("256k"));
    QCOMPARE(again.priceEdit()->text(), QStringLiteral("2.5"));
    QCOMPARE(again.headroomEdit()->text(), QStringLiteral("10"));
    QCOMPARE(again.optimizerInputs()->field("lr")->text(), QStringLiteral("2e-5"));
    QCOMPARE(again.knobPins()->combo("zero")->currentText(), QStringLiteral("3"));
    QCOMPARE(again.knobPins()->combo("tiled-mlp")->currentText(), QStringLiteral("off"));
    QCOMPARE(again.knobPins()->combo("sp")->currentText(), QStringLiteral("any"));
    QCOMPARE(again.stackChoices()->combo("attention")->currentText(), QStringLiteral("sdpa"));
    QCOMPARE(again.stackChoices()->combo("encoders")->currentText(), QStringLiteral("frozen"));
    const auto restored = again.optimizerInputs()->spec();
    QVERIFY(restored.ok());
    QCOMPARE(restored->lr, 2e-5);
    QSettings().clear();
    MainWindow fresh;
    QVERIFY(!fresh.restoreSession());
  }

  // The Memory tab says the selected plan's host memory per node beside the GPU's.
  void memoryTabShowsTheSelectedPlansHostMemory() {
    MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(window.planModel()->anyFits());
    const spplan::costmodel::Estimate& e = window.planModel()->planAt(0).estimate;
    QCOMPARE(window.tabs()->hostMemoryLine(), spplan::gui::hostMemoryDetail(e));
    QVERIFY(window.tabs()->hostMemoryLine().startsWith(QStringLiteral("Host memory per node: ")));
  }

  // Sorting the plan table moves the selected plan's row: the tabs and the banner follow it.
  void sortingKeepsTheViewsOnTheSelectedPlan() {
    MainWindow window;
    window.setInputs(knownOptions());
    window.recomputeNow();
    QVERIFY(window.planModel()->rowCount() > 2);
    const std::string best = spplan::plan_to_toml(window.planModel()->planAt(0).plan);
    QCOMPARE(window.selectedRow(), 0);
    window.planTable()->sortByColumn(PlanTableModel::RankColumn, Qt::DescendingOrder);  // the best goes last
    const int row = window.planTable()->currentIndex().row();
    QCOMPARE(row, window.planModel()->rowCount() - 1);
    QCOMPARE(spplan::plan_to_toml(window.planModel()->planAt(row).plan), best);  // the selection followed its plan
    QCOMPARE(window.selectedRow(), row);                                         // and so did the views
    QCOMPARE(window.tabs()->hostMemoryLine(), spplan::gui::hostMemoryDetail(window.planModel()->planAt(row).estimate));
  }

  void keyboardReachesTabsAndInputs() {
    MainWindow window;
    window.setInputs(knownOptions());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.activateWindow();
    QTest::keyClick(&window, Qt::Key_4, Qt::ControlModifier);
    QCOMPARE(window.tabs()->currentIndex(), static_cast<int>(PlanTabs::ScalingTab));
    QTest::keyClick(&window, Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(window.tabs()->currentIndex(), static_cast<int>(PlanTabs::TimelineTab));
    // Tab walks the inputs in reading order: model, Open config…, GPU, GPUs.
    const auto focusIn = [](QWidget* w) {
      QWidget* f = QApplication::focusWidget();
      return f == w || w->isAncestorOf(f);
    };
    window.modelCombo()->setFocus();
    QTRY_VERIFY(focusIn(window.modelCombo()));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QVERIFY(focusIn(window.gpuCombo()));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QVERIFY(focusIn(window.gpusSpin()));
    QTest::keyClick(&window, Qt::Key_Q, Qt::AltModifier);  // "Se&quence"
    QCOMPARE(QApplication::focusWidget(), window.seqEdit());
    // Bad input typed from the keyboard gets the CLI's message.
    window.seqEdit()->selectAll();
    QTest::keyClicks(window.seqEdit(), "1.5G");
    QTest::keyClick(&window, Qt::Key_F5);
    QCOMPARE(window.statusLabel()->text(), QString::fromStdString(spplan::parse_seq_len("--seq", "1.5G").status().message()));
    QCOMPARE(window.timeline()->result(), nullptr);
  }

  void screenshotsWriteOnePngPerTab() {
    QTemporaryDir dir;
    QProcess process;
    process.start(QStringLiteral(SPPLAN_GUI_EXE), {"--model", "qwen3-0.6b", "--gpu", "h100-80gb", "--gpus", "8", "--seq",
                                                   "64k", "--screenshots", dir.path()});
    QVERIFY(process.waitForFinished(120000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    for (const char* name : {"planner", "timeline", "rent", "sp-scaling", "run", "check", "corpus"}) {
      const QImage image(dir.filePath(QString::fromLatin1(name) + ".png"));
      QCOMPARE(image.size(), QSize(1280, 800));
    }
  }
};

QTEST_MAIN(TestGuiViews)
#include "tst_gui_views.moc"
