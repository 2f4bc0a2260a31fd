#include "planner/check/user_runs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "planner/check/json_text.hpp"
#include "planner/check/run_log.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::check {

std::vector<std::string> shipped_results() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(MeasuredAccuracy::default_dir(), ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

ErrorStats speed_of(const MeasuredAccuracy& table, const PlanSpec& plan) {
  const std::string& gpu = plan.cluster.gpu.measured_as();
  const Accuracy trainer = table.for_trainer(gpu, plan.stack.trainer);
  return trainer.speed.count > 0 ? trainer.speed : table.for_gpu(gpu).speed;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<std::string> runs_files_from_environment() {
  std::vector<std::string> files;
  const char* value = std::getenv(kRunsVariable);
  const std::string text = value != nullptr ? value : "";
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = std::min(text.find(':', begin), text.size());
    if (end > begin) files.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return files;
}

std::string your_runs_words(const PlanSpec& plan, const std::vector<std::string>& runs_files) {
  if (runs_files.empty()) return "";
  auto yours = MeasuredAccuracy::load(runs_files);
  if (!yours.ok()) return "";
  std::string scope = plan.stack.trainer + " on " + plan.cluster.gpu.measured_as();
  const ErrorStats e = yours->memory_error(plan.cluster.gpu.measured_as(), plan.stack.trainer, &scope);
  if (e.count == 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "; %d of your runs (%s): measured error %.1f%%, max %.1f%%", e.count, kRunsVariable,
                e.mean_abs_pct, e.max_abs_pct);
  return buf;
}

std::string runs_file_beside(const std::string& gpu_file) {
  const std::filesystem::path p(gpu_file);
  if (p.extension() == ".toml") return (p.parent_path() / (p.stem().string() + ".runs.json")).string();
  return gpu_file + ".runs.json";
}

nlohmann::json run_row(const PlanSpec& plan, const CheckReport& report, const std::vector<std::string>& logs) {
  nlohmann::json row = {{"gpu", plan.cluster.gpu.measured_as()},
                        {"trainer", plan.stack.trainer},
                        {"model", plan.model.name},
                        {"seq_len", plan.seq_len},
                        {"sp", plan.knobs.sp},
                        {"cp", plan.knobs.cp},
                        {"num_gpus", plan.cluster.num_gpus},
                        {"logs", logs},
                        {"as_planned", report.as_planned()}};
  for (const Comparison& c : report.comparisons) {
    const char* key = c.quantity == "peak_memory" ? "memory" : c.quantity == "step_time" ? "step_time_s" : nullptr;
    if (key == nullptr || c.measured <= 0) continue;  // tokens/s follows from the step time
    row[key] = {{"delta_pct", c.error_pct()}, {"predicted", c.predicted}, {"measured", c.measured},
                {"measured_as", c.measured_as}};
  }
  return row;
}

Status append_run(const std::string& path, const nlohmann::json& row) {
  nlohmann::json doc = {{"rows", nlohmann::json::array()}};
  if (look_at(path).kind != PathKind::kMissing) {
    SPPLAN_RETURN_IF_ERROR(MeasuredAccuracy::load({path}).status());  // a runs file it can read, or refused
    SPPLAN_ASSIGN_OR_RETURN(doc, parse_json_value(path, file_text(path)));
  }
  doc["rows"].push_back(row);
  return write_file_atomically(path, doc.dump(2) + "\n");
}

Result<Band> band_for(const PlanSpec& plan, const std::vector<std::string>& runs_files) {
  Band band;
  std::vector<std::string> all = shipped_results();
  all.insert(all.end(), runs_files.begin(), runs_files.end());
  SPPLAN_ASSIGN_OR_RETURN(const MeasuredAccuracy everything, MeasuredAccuracy::load(all));
  band.scope = plan.stack.trainer + " on " + plan.cluster.gpu.measured_as();
  band.memory = everything.memory_error(plan.cluster.gpu.measured_as(), plan.stack.trainer, &band.scope);
  band.speed = speed_of(everything, plan);
  if (!runs_files.empty()) {
    SPPLAN_ASSIGN_OR_RETURN(const MeasuredAccuracy yours, MeasuredAccuracy::load(runs_files));
    std::string scope = band.scope;
    band.your_memory = yours.memory_error(plan.cluster.gpu.measured_as(), plan.stack.trainer, &scope);
    band.your_speed = speed_of(yours, plan);
  }
  return band;
}

}  // namespace spplan::check
