#include "gui/trust.hpp"

#include <QObject>
#include <QStringList>

namespace spplan::gui {
namespace {

QString statsText(const QString& what, const std::string& gpu, const ErrorStats& s) {
  if (s.count == 0) return QObject::tr("%1: not validated on %2").arg(what, QString::fromStdString(gpu));
  return QObject::tr("%1 on %2: ±%3% mean, max %4% (%5 runs)")
      .arg(what, QString::fromStdString(gpu))
      .arg(s.mean_abs_pct, 0, 'f', 1)
      .arg(s.max_abs_pct, 0, 'f', 1)
      .arg(s.count);
}

QString briefStats(const QString& what, const ErrorStats& s) {
  return QObject::tr("%1 ±%2% mean (max %3%, %4 runs)")
      .arg(what)
      .arg(s.mean_abs_pct, 0, 'f', 1)
      .arg(s.max_abs_pct, 0, 'f', 1)
      .arg(s.count);
}

}  // namespace

Result<TrustTable> TrustTable::load(const std::string& path) { return load(std::vector<std::string>{path}); }

Result<TrustTable> TrustTable::load(const std::vector<std::string>& paths) {
  SPPLAN_ASSIGN_OR_RETURN(MeasuredAccuracy measured, MeasuredAccuracy::load(paths));
  return TrustTable(std::move(measured));
}

Result<TrustTable> TrustTable::loadDir(const std::string& dir) {
  SPPLAN_ASSIGN_OR_RETURN(MeasuredAccuracy measured, MeasuredAccuracy::load_dir(dir));
  return TrustTable(std::move(measured));
}

std::string TrustTable::defaultDir() { return MeasuredAccuracy::default_dir(); }

QString TrustTable::memoryText(const std::string& gpu) const {
  return statsText(QObject::tr("measured memory error"), gpu, forGpu(gpu).memory);
}

QString TrustTable::throughputText(const std::string& gpu) const {
  return statsText(QObject::tr("measured speed error"), gpu, forGpu(gpu).speed);
}

QString TrustTable::trainerText(const std::string& gpu, const std::string& trainer) const {
  const Accuracy acc = forTrainer(gpu, trainer);
  QStringList parts;
  if (acc.memory.count > 0) parts << briefStats(QObject::tr("memory"), acc.memory);
  if (acc.speed.count > 0) parts << briefStats(QObject::tr("speed"), acc.speed);
  if (parts.isEmpty()) return {};
  return QObject::tr("%1 runs on %2: %3").arg(QString::fromStdString(trainer), QString::fromStdString(gpu), parts.join(", "));
}

QString TrustTable::windowText(const std::string& gpu, const std::string& trainer) const {
  const QString both = memoryText(gpu) + "   ·   " + throughputText(gpu);
  const QString forTrainer = trainerText(gpu, trainer);
  return forTrainer.isEmpty() ? both : both + "\n" + forTrainer;
}

QString TrustTable::shortText(const std::string& gpu) const {
  const Accuracy acc = forGpu(gpu);
  if (acc.memory.count == 0 && acc.speed.count == 0) return QObject::tr("not validated");
  QStringList parts;
  if (acc.memory.count > 0) parts << QObject::tr("mem ±%1%").arg(acc.memory.mean_abs_pct, 0, 'f', 1);
  if (acc.speed.count > 0) parts << QObject::tr("speed ±%1%").arg(acc.speed.mean_abs_pct, 0, 'f', 1);
  return parts.join(", ");
}

}  // namespace spplan::gui
