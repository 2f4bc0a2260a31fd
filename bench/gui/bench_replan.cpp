// The GUI's re-plan at 256 GPUs (it took 1.4 s, 9,800 plans; the target is under 100 ms to follow
// typing): MainWindow::recomputeNow() for Llama-3.1-8B on 256 H100s at 16M tokens (the search, the
// selected plan's sweep, SP scaling, simulated step and banner), with the Memory tab in front and
// with What to rent in front (it re-searches every preset and node shape then), against the search
// alone (search::search_plans, what `spplan plan` runs) in the same process. Then the re-plan with a
// corpus set (validation/corpora/longalpaca-12k.qwen2.5.lengths.csv, bfd: each re-plan packs it at the
// sequence length and prices every plan per document, and the Corpus tab bins it), against the same
// re-plan without it, for qwen2.5-7b on 4 x a100-80gb (usp) at 64k: `spplan plan --lengths`'s example.
// Prints the medians and their ratio; nothing here passes or fails.
// Run: QT_QPA_PLATFORM=offscreen build/bench/gui/bench_gui_replan [REPEATS]
#include <QApplication>
#include <QComboBox>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "gui/corpus_inputs.hpp"
#include "gui/gui_options.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_table_model.hpp"
#include "gui/plan_tabs.hpp"
#include "gui/rent_model.hpp"
#include "planner/search/search.hpp"

namespace {

double median_ms(int repeats, const std::function<void()>& run) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  setenv("QT_QPA_PLATFORM", "offscreen", 0);
  setenv("SPPLAN_CONFIG_DIR", SPPLAN_CONFIG_DIR_DEFAULT, 0);
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  QApplication app(argc, argv);
  spplan::gui::MainWindow window;
  spplan::gui::GuiOptions options;
  options.model = "llama-3.1-8b";
  options.gpu = "h100-80gb";
  options.gpus = "256";
  options.seq = "16m";
  window.setInputs(options);
  window.recomputeNow();  // first: loads the presets and the measured accuracy
  const double replan = median_ms(repeats, [&] { window.recomputeNow(); });
  window.tabs()->setCurrentIndex(spplan::gui::PlanTabs::RentTab);
  spplan::gui::RentModel* rent = window.tabs()->rentModel();
  rent->finishPricing();
  // With What to rent in front the re-plan returns while the table is priced on worker threads,
  // and the table is shown when that ends: the time to each, per repeat.
  std::vector<double> returned, shown;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    window.recomputeNow();
    returned.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    rent->finishPricing();
    shown.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(returned.begin(), returned.end());
  std::sort(shown.begin(), shown.end());
  const double replanRent = returned[returned.size() / 2], rentShown = shown[shown.size() / 2];
  const spplan::PlanSpec base = window.planModel()->planAt(0).plan;
  const double search = median_ms(repeats, [&] { spplan::search::search_plans(base, true); });
  std::printf("GUI re-plan, llama-3.1-8b on 256 x h100-80gb at 16M tokens: %.1f ms (median of %d; target 100 ms)\n",
              replan, repeats);
  std::printf("with What to rent in front (every preset at 1, 2 and 4 nodes): the re-plan returns in %.1f ms, the "
              "table is shown %.1f ms after the input\n",
              replanRent, rentShown);
  std::printf("the search alone (search_plans, %d knob sets): %.1f ms; re-plan / search = %.2f\n",
              window.planModel()->evaluated(), search, replan / search);

  // With and without the corpus, the Memory tab in front, in one window.
  window.tabs()->setCurrentIndex(spplan::gui::PlanTabs::MemoryTab);
  options.model = "qwen2.5-7b";
  options.gpu = "a100-80gb";
  options.gpus = "4";
  options.seq = "64k";
  window.setInputs(options);
  window.trainerCombo()->setCurrentText("usp");
  window.recomputeNow();
  const double plain = median_ms(repeats, [&] { window.recomputeNow(); });
  window.corpusInputs()->setPath(SPPLAN_SOURCE_DIR_DEFAULT "/validation/corpora/longalpaca-12k.qwen2.5.lengths.csv");
  if (!window.corpusInputs()->status()) {
    std::printf("corpus: %s\n", window.corpusInputs()->status().message().c_str());
    return 1;
  }
  window.recomputeNow();
  const double withCorpus = median_ms(repeats, [&] { window.recomputeNow(); });
  std::printf("GUI re-plan, qwen2.5-7b on 4 x a100-80gb (usp) at 64k: %.1f ms; with longalpaca-12k's 11,998 documents "
              "(bfd): %.1f ms; with / without = %.2f\n",
              plain, withCorpus, withCorpus / plain);
  return 0;
}
