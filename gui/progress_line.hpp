// Reading the engine's per-step progress line (engine/run/report.cpp progress_line(), printed by rank
// 0 on stderr after every step):
//   step 3/5  loss 6.931472  lr 0.0003  grad norm 1.234  tokens/s 812.5  step 0.630 s  peak memory 41.2 MiB
// The line is stable text the engine already prints, so the GUI needs no extra engine option.
#pragma once

#include <QString>
#include <cstdint>
#include <optional>

namespace spplan::gui {

struct StepProgress {
  int64_t step = 0;
  int64_t totalSteps = 0;
  double loss = 0;
  double tokensPerS = 0;
  double stepTimeS = 0;
  double peakMemoryBytes = 0;  // largest over ranks
  std::optional<double> mfu;   // a fraction; absent when the engine knows no peak for the machine
  QString eta;                 // "1m 05s"; empty on the last step
};

// nullopt for any other line (warnings, the prediction line, rank errors).
std::optional<StepProgress> parseProgressLine(const QString& line);

}  // namespace spplan::gui
