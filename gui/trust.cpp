#include "gui/trust.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

#include "planner/config/loaders.hpp"

namespace spplan::gui {
namespace {

void add(ErrorStats* stats, double deltaPct) {
  const double a = std::fabs(deltaPct);
  stats->meanAbsPct = (stats->meanAbsPct * stats->count + a) / (stats->count + 1);
  stats->maxAbsPct = std::max(stats->maxAbsPct, a);
  ++stats->count;
}

QString statsText(const char* what, const std::string& gpu, const ErrorStats& s) {
  if (s.count == 0) return QObject::tr("%1: not validated on %2").arg(what, QString::fromStdString(gpu));
  return QObject::tr("%1 on %2: ±%3% mean, max %4% (%5 published runs)")
      .arg(what, QString::fromStdString(gpu))
      .arg(s.meanAbsPct, 0, 'f', 1)
      .arg(s.maxAbsPct, 0, 'f', 1)
      .arg(s.count);
}

}  // namespace

Result<TrustTable> TrustTable::load(const std::string& path) {
  SPPLAN_RETURN_IF_ERROR(check_input_file(path));
  QFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::ReadOnly)) return Status::invalid(path + ": cannot be read (allowed: a readable file)");
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
  if (doc.isNull() || !doc.isObject()) {
    return Status::invalid(path + ": not a JSON object (" + error.errorString().toStdString() +
                           "; allowed: the output of `spplan validate published FILE.csv --json`)");
  }
  const QJsonValue rows = doc.object().value("rows");
  if (!rows.isArray()) return Status::invalid(path + ": key \"rows\": missing or not an array (allowed: an array of rows)");
  TrustTable table;
  table.m_path = path;
  int index = 0;
  for (const QJsonValue& value : rows.toArray()) {
    const QJsonObject row = value.toObject();
    if (!row.value("gpu").isString()) {
      return Status::invalid(path + ": key \"rows[" + std::to_string(index) +
                             "].gpu\": missing (allowed: a GPU preset name; regenerate with scripts/validation-results.sh)");
    }
    GpuAccuracy& acc = table.m_byGpu[row.value("gpu").toString().toStdString()];
    if (row.value("memory").isObject()) add(&acc.memory, row.value("memory").toObject().value("delta_pct").toDouble());
    for (const char* key : {"tokens_per_s", "tflops_per_gpu"}) {
      if (row.value(key).isObject()) add(&acc.throughput, row.value(key).toObject().value("delta_pct").toDouble());
    }
    ++index;
  }
  return table;
}

std::string TrustTable::defaultPath() { return configs_dir() + "/../validation/results/published.json"; }

GpuAccuracy TrustTable::forGpu(const std::string& gpu) const {
  const auto it = m_byGpu.find(gpu);
  return it == m_byGpu.end() ? GpuAccuracy{} : it->second;
}

QString TrustTable::memoryText(const std::string& gpu) const {
  return statsText("measured memory error", gpu, forGpu(gpu).memory);
}

QString TrustTable::throughputText(const std::string& gpu) const {
  return statsText("measured throughput error", gpu, forGpu(gpu).throughput);
}

QString TrustTable::shortText(const std::string& gpu) const {
  const GpuAccuracy acc = forGpu(gpu);
  if (acc.memory.count == 0 && acc.throughput.count == 0) return QObject::tr("not validated");
  QStringList parts;
  if (acc.memory.count > 0) parts << QObject::tr("mem ±%1%").arg(acc.memory.meanAbsPct, 0, 'f', 1);
  if (acc.throughput.count > 0) parts << QObject::tr("tput ±%1%").arg(acc.throughput.meanAbsPct, 0, 'f', 1);
  return parts.join(", ");
}

}  // namespace spplan::gui
