#include "gui/trust.hpp"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

#include "planner/config/loaders.hpp"

namespace spplan::gui {
namespace {

const char* const kRegenerate = "regenerate with scripts/validation-results.sh";

void add(ErrorStats* stats, double deltaPct) {
  const double a = std::fabs(deltaPct);
  stats->meanAbsPct = (stats->meanAbsPct * stats->count + a) / (stats->count + 1);
  stats->maxAbsPct = std::max(stats->maxAbsPct, a);
  ++stats->count;
}

// The errors of one row: memory, and speed unless the row's throughput is marked inconsistent.
struct RowDeltas {
  std::vector<double> memory, speed;
};

// `key` of `row` ("rows[i]." + key in messages): absent, or an object whose delta_pct is a number.
Status readDelta(const std::string& path, const std::string& rowKey, const QJsonObject& row,
                 const char* key, std::vector<double>* out) {
  if (!row.contains(key)) return Status::ok();
  const QJsonValue delta = row.value(key).toObject().value("delta_pct");
  if (!row.value(key).isObject() || !delta.isDouble()) {
    return Status::invalid(path + ": key \"" + rowKey + "." + key + ".delta_pct\": missing or not a number (allowed: " +
                           "a number, percent; " + kRegenerate + ")");
  }
  out->push_back(delta.toDouble());
  return Status::ok();
}

Result<RowDeltas> readRow(const std::string& path, const std::string& rowKey, const QJsonObject& row) {
  RowDeltas deltas;
  SPPLAN_RETURN_IF_ERROR(readDelta(path, rowKey, row, "memory", &deltas.memory));
  const QJsonValue consistent = row.value("throughput_consistent");
  if (!consistent.isUndefined() && !consistent.isBool()) {
    return Status::invalid(path + ": key \"" + rowKey + ".throughput_consistent\": not true or false (allowed: " +
                           "true, false; " + kRegenerate + ")");
  }
  if (consistent.toBool(true)) {
    for (const char* key : {"tokens_per_s", "tflops_per_gpu", "step_time_s"}) {
      SPPLAN_RETURN_IF_ERROR(readDelta(path, rowKey, row, key, &deltas.speed));
    }
  }
  return deltas;
}

void addRow(GpuAccuracy* acc, const RowDeltas& deltas) {
  for (double d : deltas.memory) add(&acc->memory, d);
  for (double d : deltas.speed) add(&acc->throughput, d);
}

QString statsText(const QString& what, const std::string& gpu, const ErrorStats& s) {
  if (s.count == 0) return QObject::tr("%1: not validated on %2").arg(what, QString::fromStdString(gpu));
  return QObject::tr("%1 on %2: ±%3% mean, max %4% (%5 runs)")
      .arg(what, QString::fromStdString(gpu))
      .arg(s.meanAbsPct, 0, 'f', 1)
      .arg(s.maxAbsPct, 0, 'f', 1)
      .arg(s.count);
}

QString briefStats(const QString& what, const ErrorStats& s) {
  return QObject::tr("%1 ±%2% mean (max %3%, %4 runs)")
      .arg(what)
      .arg(s.meanAbsPct, 0, 'f', 1)
      .arg(s.maxAbsPct, 0, 'f', 1)
      .arg(s.count);
}

}  // namespace

Status TrustTable::addFile(const std::string& path) {
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
  // Read every row before adding any, so a bad file leaves the table as it was.
  std::vector<std::pair<std::pair<std::string, std::string>, RowDeltas>> parsed;
  int index = 0;
  for (const QJsonValue& value : rows.toArray()) {
    const QJsonObject row = value.toObject();
    const std::string rowKey = "rows[" + std::to_string(index++) + "]";
    if (!row.value("gpu").isString()) {
      return Status::invalid(path + ": key \"" + rowKey + ".gpu\": missing (allowed: a GPU preset name; " + kRegenerate + ")");
    }
    const QJsonValue trainer = row.value("trainer");
    if (!trainer.isUndefined() && !trainer.isString()) {
      return Status::invalid(path + ": key \"" + rowKey + ".trainer\": not a string (allowed: a trainer name; " +
                             kRegenerate + ")");
    }
    SPPLAN_ASSIGN_OR_RETURN(RowDeltas deltas, readRow(path, rowKey, row));
    parsed.push_back({{row.value("gpu").toString().toStdString(), trainer.toString().toStdString()}, std::move(deltas)});
  }
  for (const auto& [key, deltas] : parsed) {
    addRow(&m_byGpu[key.first], deltas);
    if (!key.second.empty()) addRow(&m_byGpuTrainer[key], deltas);
  }
  return Status::ok();
}

Result<TrustTable> TrustTable::load(const std::string& path) { return load(std::vector<std::string>{path}); }

Result<TrustTable> TrustTable::load(const std::vector<std::string>& paths) {
  TrustTable table;
  for (const std::string& path : paths) SPPLAN_RETURN_IF_ERROR(table.addFile(path));
  return table;
}

Result<TrustTable> TrustTable::loadDir(const std::string& dir) {
  const QDir folder(QString::fromStdString(dir));
  const QStringList names = folder.entryList({"*.json"}, QDir::Files | QDir::Readable, QDir::Name);
  if (names.isEmpty()) {
    return Status::invalid(dir + ": no results file (*.json) in the folder (allowed: a folder written by " +
                           "scripts/validation-results.sh)");
  }
  std::vector<std::string> paths;
  for (const QString& name : names) paths.push_back(folder.filePath(name).toStdString());
  return load(paths);
}

std::string TrustTable::defaultDir() { return configs_dir() + "/../validation/results"; }

GpuAccuracy TrustTable::forGpu(const std::string& gpu) const {
  const auto it = m_byGpu.find(gpu);
  return it == m_byGpu.end() ? GpuAccuracy{} : it->second;
}

std::vector<std::string> TrustTable::gpus() const {
  std::vector<std::string> names;
  for (const auto& [gpu, acc] : m_byGpu) names.push_back(gpu);
  return names;
}

GpuAccuracy TrustTable::forTrainer(const std::string& gpu, const std::string& trainer) const {
  const auto it = m_byGpuTrainer.find({gpu, trainer});
  return it == m_byGpuTrainer.end() ? GpuAccuracy{} : it->second;
}

QString TrustTable::memoryText(const std::string& gpu) const {
  return statsText(QObject::tr("measured memory error"), gpu, forGpu(gpu).memory);
}

QString TrustTable::throughputText(const std::string& gpu) const {
  return statsText(QObject::tr("measured speed error"), gpu, forGpu(gpu).throughput);
}

QString TrustTable::trainerText(const std::string& gpu, const std::string& trainer) const {
  const GpuAccuracy acc = forTrainer(gpu, trainer);
  QStringList parts;
  if (acc.memory.count > 0) parts << briefStats(QObject::tr("memory"), acc.memory);
  if (acc.throughput.count > 0) parts << briefStats(QObject::tr("speed"), acc.throughput);
  if (parts.isEmpty()) return {};
  return QObject::tr("%1 runs on %2: %3").arg(QString::fromStdString(trainer), QString::fromStdString(gpu), parts.join(", "));
}

QString TrustTable::windowText(const std::string& gpu, const std::string& trainer) const {
  const QString both = memoryText(gpu) + "   ·   " + throughputText(gpu);
  const QString forTrainer = trainerText(gpu, trainer);
  return forTrainer.isEmpty() ? both : both + "\n" + forTrainer;
}

QString TrustTable::shortText(const std::string& gpu) const {
  const GpuAccuracy acc = forGpu(gpu);
  if (acc.memory.count == 0 && acc.throughput.count == 0) return QObject::tr("not validated");
  QStringList parts;
  if (acc.memory.count > 0) parts << QObject::tr("mem ±%1%").arg(acc.memory.meanAbsPct, 0, 'f', 1);
  if (acc.throughput.count > 0) parts << QObject::tr("speed ±%1%").arg(acc.throughput.meanAbsPct, 0, 'f', 1);
  return parts.join(", ");
}

}  // namespace spplan::gui
