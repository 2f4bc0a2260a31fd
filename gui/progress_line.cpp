#include "gui/progress_line.hpp"

#include <QRegularExpression>

#include "planner/core/units.hpp"

namespace spplan::gui {

std::optional<StepProgress> parseProgressLine(const QString& line) {
  static const QRegularExpression kLine(
      QStringLiteral(R"(^step (\d+)/(\d+)\s+loss (\S+)\s+lr \S+\s+grad norm \S+\s+tokens/s (\S+)\s+step (\S+) s\s+)"
                     R"(peak memory (\S+) MiB\s*$)"));
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
  return p;
}

}  // namespace spplan::gui
