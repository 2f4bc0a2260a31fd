// Trust: how accurate the planner measured itself on one GPU (and for one trainer), as the GUI
// prints it beside every predicted number. The numbers are planner/accuracy's MeasuredAccuracy
// (the validation results on disk), which the CLI's verdicts read too; this class words them.
#pragma once

#include <QString>
#include <string>
#include <vector>

#include "planner/accuracy/measured_accuracy.hpp"
#include "planner/core/status.hpp"

namespace spplan::gui {

class TrustTable {
 public:
  // One results file, or every file of `paths` (MeasuredAccuracy::load: the first failure, naming
  // file and key).
  static Result<TrustTable> load(const std::string& path);
  static Result<TrustTable> load(const std::vector<std::string>& paths);
  // Every *.json in `dir` (sorted by name); fails when the folder has none.
  static Result<TrustTable> loadDir(const std::string& dir);
  // The results folder shipped with the source tree (MeasuredAccuracy::default_dir).
  static std::string defaultDir();

  const MeasuredAccuracy& measured() const { return m_measured; }
  // Accuracy for `gpu` (a preset name) over every trainer; count 0 in both when no row measured it.
  Accuracy forGpu(const std::string& gpu) const { return m_measured.for_gpu(gpu); }
  // The same over the rows of `trainer` ("arctic", "hf", "liger", "engine") only.
  Accuracy forTrainer(const std::string& gpu, const std::string& trainer) const {
    return m_measured.for_trainer(gpu, trainer);
  }
  // The GPUs with at least one row, sorted.
  std::vector<std::string> gpus() const { return m_measured.gpus(); }

  // "measured memory error on h100-80gb: ±4.1% mean, max 9.0% (7 runs)"-style text for a
  // predicted quantity; says "not validated on <gpu>" when there is no row.
  QString memoryText(const std::string& gpu) const;
  QString throughputText(const std::string& gpu) const;
  // "engine runs on h100-80gb: memory ±3.0% mean (max 8.0%, 10 runs), step time ±6.0% mean
  // (max 17.0%, 10 runs)", or "" when no row of that trainer ran on that GPU.
  QString trainerText(const std::string& gpu, const std::string& trainer) const;
  // The window's trust line: memoryText and throughputText, then trainerText on a second line
  // when `trainer` has rows on `gpu`.
  QString windowText(const std::string& gpu, const std::string& trainer) const;
  // Both in a few words for a table cell: "mem ±4.1%, speed ±12.0%" or "not validated".
  QString shortText(const std::string& gpu) const;

 private:
  explicit TrustTable(MeasuredAccuracy measured) : m_measured(std::move(measured)) {}

  MeasuredAccuracy m_measured;
};

}  // namespace spplan::gui
