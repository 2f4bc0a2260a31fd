#include "engine/run/run_log.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "engine/run/report.hpp"
#include "planner/config/json_file.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/path_info.hpp"
#include "planner/config/knobs_json.hpp"
#include "planner/core/version.hpp"

namespace spplan::engine {

namespace {

// The lines of an earlier log that a run resumed from `step` keeps: each event up to that step
// (a line without "step", the summary, goes with the step before it); a line cut by a kill is dropped.
std::string lines_up_to(const std::string& path, int64_t step) {
  std::ifstream in(path);
  std::string kept, line;
  int64_t last_step = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    if (j.contains("step") && j["step"].is_number_integer()) last_step = j["step"].get<int64_t>();
    if (last_step <= step) kept += line + "\n";
  }
  return kept;
}

}  // namespace

Result<RunLog> RunLog::open(const std::string& path, std::optional<int64_t> resumed_step) {
  if (resumed_step && look_at(path).kind == PathKind::kFile) {
    if (Status s = write_file_atomically(path, lines_up_to(path, *resumed_step)); !s) {
      return Status::invalid("--log: " + path + ": cannot rewrite (" + s.message() + ")");
    }
  }
  RunLog log;
  log.out_ = std::make_unique<std::ofstream>(path, resumed_step ? std::ios::app : std::ios::trunc);
  if (!*log.out_) return Status::invalid("--log: " + path + ": cannot open for writing (allowed: a writable file path)");
  return log;
}

void RunLog::write(const nlohmann::json& line) {
  if (!out_) return;
  *out_ << dump_utf8(line) << '\n';
  out_->flush();  // a run killed later keeps this line
}

nlohmann::json step_log_line(const StepStats& st, const StepWatch& w) {
  const double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json j = {{"event", "step"},
                      {"step", w.step},
                      {"loss", st.loss},
                      {"learning_rate", st.lr},
                      {"grad_norm", st.grad_norm},
                      {"tokens", st.tokens},
                      {"tokens_per_s", w.tokens_per_s},
                      {"step_time_s", st.step_time_s},
                      {"peak_memory_bytes", w.peak_memory_bytes},
                      {"mfu", w.mfu ? nlohmann::json(*w.mfu) : nlohmann::json()},
                      {"eta_s", w.eta_s},
                      {"epoch", w.epoch},
                      {"data_position", w.data_position ? nlohmann::json(*w.data_position) : nlohmann::json()},
                      {"time", now_s}};
  return j;
}

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[48];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh %02lldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm %02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

std::string watch_progress_line(const StepStats& st, const StepWatch& w) {
  std::string line = progress_line(w.step, w.total_steps, st.loss, w.tokens_per_s, st.step_time_s, w.peak_memory_bytes,
                                   st.lr, st.grad_norm);
  if (w.mfu) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "  MFU %.1f%%", 100.0 * *w.mfu);
    line += buf;
  }
  if (w.step < w.total_steps) line += "  ETA " + duration_text(w.eta_s);
  return line;
}

nlohmann::json run_settings(const RunOptions& o) {
  const OptimizerSpec& opt = o.plan.optimizer;
  nlohmann::json settings = knobs_json(o.plan.knobs);  // the knobs as every report shows them
  settings.update(nlohmann::json{
          {"plan", o.plan_path.empty() ? nlohmann::json() : nlohmann::json(o.plan_path)},
          {"seed", o.seed},
          {"steps", o.steps},
          {"data", o.data_paths},
          {"shuffle", o.shuffle},
          {"eos_id", o.eos_id < 0 ? nlohmann::json() : nlohmann::json(o.eos_id)},
          {"eval_data", o.eval_paths},
          {"init_from", o.init_from.empty() ? nlohmann::json() : nlohmann::json(o.init_from)},
          {"resume", o.resume_dir.empty() ? nlohmann::json() : nlohmann::json(o.resume_dir)},
          {"save", o.save_dir.empty() ? nlohmann::json() : nlohmann::json(o.save_dir)},
          {"optimizer",
           {{"name", "adamw"},
            {"lr", opt.lr},
            {"warmup_steps", opt.warmup_steps},
            {"lr_schedule", to_string(opt.lr_schedule)},
            {"min_lr", opt.min_lr},
            {"weight_decay", opt.weight_decay},
            {"grad_clip", opt.grad_clip},
            {"betas", {opt.adam_beta1, opt.adam_beta2}},
            {"eps", opt.adam_eps}}},
          {"commit", std::string(commit())}});
  return settings;
}


}  // namespace spplan::engine
