#include "gui/progress_line.hpp"

#include <QRegularExpression>

#include "planner/core/units.hpp"

namespace spplan::gui {

std::optional<StepProgress> parseProgressLine(const QString& line) {
  static const QRegularExpression kLine(
      QStringLiteral(R"(^step (\d+)/(\d+)\s+loss (\S+)\s+lr \S+\s+grad norm \S+\s+tokens/s (\S+)\s+step (\S+) s\s+)"
                     R"(peak memory (\S+) MiB(?:\s+MFU (\S+)%)?(?:\s+ETA (.+?))?\s*$)"));
  const QRegularExpressionMatch m = kLine.match(line);
  if (!m.hasMatch()) return std::nullopt;
  StepProgress p;
  bool ok[6] = {};
  p.step = m.captured(1).toLongLong(&ok[0]);
  p.totalSteps = m.captured(2).toLongLong(&ok[1]);
  p.loss = m.captured(3).toDouble(&ok[2]);  // "nan" parses as NaN: a diverged run is still a step
  p.tokensPerS = m.captured(4).toDouble(&ok[3]);
  p.stepTimeS = m.captured(5).toDouble(&ok[4]);
  p.peakMemoryBytes = m.captured(6).toDouble(&ok[5]) * kMiB;
  for (bool b : ok) {
    if (!b) return std::nullopt;
  }
  // engine/run/run_log.hpp: MFU when the priced machine's peak is known, ETA before the last step.
  if (m.hasCaptured(7)) {
    bool mfuOk = false;
    const double mfu = m.captured(7).toDouble(&mfuOk) / 100.0;
    if (mfuOk) p.mfu = mfu;
  }
  if (m.hasCaptured(8)) p.eta = m.captured(8);
  return p;
}

}  // namespace spplan::gui
