#include "engine/run/resume_settings.hpp"

#include <functional>
#include <map>

#include "planner/core/parse.hpp"

namespace spplan::engine {
namespace {

// One saved setting: its value as text in the run and in the checkpoint, and how to restore it.
struct Setting {
  std::string run, saved;
  std::function<void()> restore;
};

std::map<std::string, Setting> settings_table(RunOptions* o, const TrainingSettings& t) {
  OptimizerSpec& opt = o->plan.optimizer;
  const OptimizerSpec& was = t.optimizer;
  auto number = [](double v) { return format_number(v); };
  auto yes_no = [](bool v) { return std::string(v ? "given" : "not given"); };
  // train_steps 0 (a first run without --train-steps) spanned its --steps: that is its horizon.
  const int64_t horizon_given = opt.train_steps > 0 ? opt.train_steps : 0;
  const int64_t saved_horizon = was.train_steps > 0 ? was.train_steps : t.schedule_steps;
  return {
      {"lr", {number(opt.lr), number(was.lr), [&opt, was] { opt.lr = was.lr; }}},
      {"warmup_steps",
       {std::to_string(opt.warmup_steps), std::to_string(was.warmup_steps), [&opt, was] { opt.warmup_steps = was.warmup_steps; }}},
      {"lr_schedule",
       {to_string(opt.lr_schedule), to_string(was.lr_schedule), [&opt, was] { opt.lr_schedule = was.lr_schedule; }}},
      {"min_lr", {number(opt.min_lr), number(was.min_lr), [&opt, was] { opt.min_lr = was.min_lr; }}},
      {"weight_decay",
       {number(opt.weight_decay), number(was.weight_decay), [&opt, was] { opt.weight_decay = was.weight_decay; }}},
      {"grad_clip", {number(opt.grad_clip), number(was.grad_clip), [&opt, was] { opt.grad_clip = was.grad_clip; }}},
      {"train_steps",
       {std::to_string(horizon_given), std::to_string(saved_horizon), [&opt, was] { opt.train_steps = was.train_steps; }}},
      {"adam_beta1", {number(opt.adam_beta1), number(was.adam_beta1), [&opt, was] { opt.adam_beta1 = was.adam_beta1; }}},
      {"adam_beta2", {number(opt.adam_beta2), number(was.adam_beta2), [&opt, was] { opt.adam_beta2 = was.adam_beta2; }}},
      {"adam_eps", {number(opt.adam_eps), number(was.adam_eps), [&opt, was] { opt.adam_eps = was.adam_eps; }}},
      {"weight_decay_all",
       {yes_no(o->weight_decay_all), yes_no(t.weight_decay_all), [o, t] { o->weight_decay_all = t.weight_decay_all; }}},
  };
}

// --seq differs from the checkpoint's: where the data continues, or why it cannot.
Result<std::string> seq_change(const RunOptions& o, const LoadedCheckpoint& ck, const TrainingSettings& t) {
  const std::string from = std::to_string(t.seq_len), to = std::to_string(o.plan.seq_len);
  if (o.shuffle) {
    return Status::invalid(o.where("seq_len") + ": value " + to + " differs from the " + from + " that " + ck.folder +
                           " was trained at, with --shuffle (a shuffled pass is an order of " + from +
                           "-token windows; allowed: " + from + ")");
  }
  if (o.data_paths.empty()) {
    return "--seq " + to + " after " + from + ": synthetic data continues at sequence " +
           std::to_string(ck.meta.next_sequence) + " (sequences of " + to + " tokens from there)";
  }
  return "--seq " + to + " after " + from + ": --data continues at token " + std::to_string(t.next_token) +
         " of the stream, where the checkpoint's run stopped (windows of " + to + " tokens from there)";
}

}  // namespace

TrainingSettings settings_of(const RunOptions& o) {
  TrainingSettings t;
  t.optimizer = o.plan.optimizer;
  t.schedule_steps = o.schedule_steps;
  t.weight_decay_all = o.weight_decay_all;
  t.seq_len = o.plan.seq_len;
  return t;
}

Result<std::string> continue_settings(RunOptions* o, const LoadedCheckpoint& ck, bool convert_only) {
  if (!ck.meta.settings) return std::string();  // written before settings were stored
  const TrainingSettings& saved = *ck.meta.settings;
  std::map<std::string, Setting> table = settings_table(o, saved);
  for (const auto& [key, where] : o->settings_given) {
    const Setting& s = table.at(key);
    if (convert_only || s.run == s.saved) continue;
    return Status::invalid(where + ": value " + s.run + " differs from the " + s.saved + " that " + ck.folder +
                           " was trained with (allowed: " + s.saved + ", or leave it out: a resume continues the " +
                           "checkpoint's settings; another schedule is another run, from an --export-hf with --init-from)");
  }
  for (auto& [key, s] : table) s.restore();
  o->schedule_steps = saved.schedule_steps;
  if (convert_only) return std::string();
  if (!o->steps_given) o->steps = o->plan.optimizer.train_steps > 0 ? o->plan.optimizer.train_steps : saved.schedule_steps;
  std::string notes;
  if (saved.seq_len != o->plan.seq_len) {
    SPPLAN_ASSIGN_OR_RETURN(notes, seq_change(*o, ck, saved));
  }
  if (o->steps > o->schedule_steps && o->plan.optimizer.lr_schedule != LrSchedule::kConstant) {
    notes += std::string(notes.empty() ? "" : "; ") + "steps " + std::to_string(o->schedule_steps + 1) + " to " +
             std::to_string(o->steps) + " run past the schedule's " + std::to_string(o->schedule_steps) +
             " steps, at min_lr " + format_number(o->plan.optimizer.min_lr);
  }
  return notes;
}

}  // namespace spplan::engine
