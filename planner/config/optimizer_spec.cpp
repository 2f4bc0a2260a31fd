#include "planner/config/optimizer_spec.hpp"

#include <algorithm>
#include <map>

#include "planner/core/parse.hpp"

namespace spplan {

const std::vector<std::string>& lr_schedule_names() {
  static const std::vector<std::string> kNames{"constant", "cosine", "linear"};
  return kNames;
}

std::string to_string(LrSchedule schedule) { return lr_schedule_names()[static_cast<size_t>(schedule)]; }

const std::vector<std::string>& optimizer_keys() {
  static const std::vector<std::string> kKeys{"lr",         "warmup_steps", "lr_schedule", "min_lr",
                                              "weight_decay", "grad_clip", "train_steps", "adam_beta1",
                                              "adam_beta2", "adam_eps"};
  return kKeys;
}

OptimizerSpec fine_tuning_recipe() {
  OptimizerSpec o;
  // ALST's own runs fine-tune Llama-3.1-8B/70B and Qwen3-32B at 1e-5 (ArcticTraining
  // projects/sequence-parallelism/run-h100-sp8-llama-8b.yml: optimizer.learning_rate 0.00001); the
  // engine's 1e-3 diverges on a pretrained 8B model.
  o.lr = 1e-5;
  // Linear decay to 0 after the warm-up: ArcticTraining's scheduler default (HFSchedulerConfig name
  // "linear") and transformers' TrainingArguments lr_scheduler_type default "linear".
  o.lr_schedule = LrSchedule::kLinear;
  o.min_lr = 0;
  // ArcticTraining's OptimizerConfig default weight_decay 0.1 (arctic_training/config/optimizer.py).
  o.weight_decay = 0.1;
  // Clip the global norm at 1: transformers' TrainingArguments max_grad_norm default, which TRL's
  // SFTConfig inherits.
  o.grad_clip = 1.0;
  o.warmup_steps = 0;  // a ratio of the run: set with train_steps (default_warmup_steps)
  // Betas and eps: OptimizerSpec's, the LLaMA recipe (cited there).
  return o;
}

int64_t default_warmup_steps(int64_t train_steps) {
  constexpr double kWarmupRatio = 0.1;  // ArcticTraining HFSchedulerConfig.warmup_ratio
  return static_cast<int64_t>(kWarmupRatio * static_cast<double>(train_steps));
}

std::string optimizer_flag(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

Status check_optimizer(const OptimizerSpec& o, const std::function<std::string(const std::string& key)>& where) {
  if (o.train_steps > 0 && o.warmup_steps > o.train_steps) {
    return Status::invalid(where("warmup_steps") + ": value " + std::to_string(o.warmup_steps) +
                           " is longer than train_steps " + std::to_string(o.train_steps) +
                           " (allowed: 0 to train_steps)");
  }
  if (o.min_lr > o.lr) {
    return Status::invalid(where("min_lr") + ": value " + format_number(o.min_lr) + " is above the learning rate " +
                           format_number(o.lr) + " (allowed: 0 to lr)");
  }
  return Status::ok();
}

std::vector<FlagSpec> optimizer_flag_specs(const OptimizerSpec& d) {
  const std::map<std::string, FlagSpec> help{
      {"lr", {"", true, "AdamW's peak learning rate, reached after the warm-up", "a number in (0, 1]", format_number(d.lr)}},
      {"warmup_steps", {"", true, "optimizer steps of linear warm-up from 0", "an integer >= 0",
                        std::to_string(d.warmup_steps)}},
      {"lr_schedule", {"", true, "the learning rate's shape after the warm-up", join(lr_schedule_names()),
                       to_string(d.lr_schedule)}},
      {"min_lr", {"", true, "where cosine and linear schedules end", "a number in [0, lr]", format_number(d.min_lr)}},
      {"weight_decay", {"", true, "AdamW's decoupled weight decay", "a number in [0, 1]", format_number(d.weight_decay)}},
      {"grad_clip", {"", true, "the global gradient L2 norm is clipped to this", "a number >= 0 (0: no clipping)",
                     format_number(d.grad_clip)}},
      {"train_steps", {"", true, "optimizer steps the schedule spans (sets the warm-up to 10% unless given)",
                       "an integer 0..1000000000 (0: the run's --steps)", d.train_steps > 0 ? std::to_string(d.train_steps) : "the run's --steps"}},
      {"adam_beta1", {"", true, "AdamW's first-moment decay", "a number in [0, " + format_number(kMaxAdamBeta) + "]",
                      format_number(d.adam_beta1)}},
      {"adam_beta2", {"", true, "AdamW's second-moment decay", "a number in [0, " + format_number(kMaxAdamBeta) + "]",
                      format_number(d.adam_beta2)}},
      {"adam_eps", {"", true, "AdamW's epsilon", "a number in [" + format_number(kMinAdamEps) + ", " +
                    format_number(kMaxAdamEps) + "]", format_number(d.adam_eps)}}};
  std::vector<FlagSpec> specs;
  for (const std::string& key : optimizer_keys()) {
    FlagSpec spec = help.count(key) ? help.at(key) : FlagSpec{};
    spec.name = optimizer_flag(key).substr(2);
    specs.push_back(spec);
  }
  return specs;
}

Status apply_optimizer_flags(const Args& args, OptimizerSpec* o) {
  // Each in its range, the one plan files are read in (OptimizerRanges).
  if (auto v = args.get("lr")) {
    SPPLAN_ASSIGN_OR_RETURN(o->lr, parse_in("--lr", *v, kOptimizerRanges.lr));
  }
  if (auto v = args.get("warmup-steps")) {
    SPPLAN_ASSIGN_OR_RETURN(o->warmup_steps, parse_in("--warmup-steps", *v, kOptimizerRanges.warmup_steps));
  }
  if (auto v = args.get("lr-schedule")) {
    SPPLAN_ASSIGN_OR_RETURN(const size_t i, parse_choice("--lr-schedule", *v, lr_schedule_names()));
    o->lr_schedule = static_cast<LrSchedule>(i);
  }
  if (auto v = args.get("min-lr")) {
    SPPLAN_ASSIGN_OR_RETURN(o->min_lr, parse_in("--min-lr", *v, kOptimizerRanges.min_lr));
  }
  if (auto v = args.get("weight-decay")) {
    SPPLAN_ASSIGN_OR_RETURN(o->weight_decay, parse_in("--weight-decay", *v, kOptimizerRanges.weight_decay));
  }
  if (auto v = args.get("grad-clip")) {
    SPPLAN_ASSIGN_OR_RETURN(o->grad_clip, parse_in("--grad-clip", *v, kOptimizerRanges.grad_clip));
  }
  if (auto v = args.get("train-steps")) {
    SPPLAN_ASSIGN_OR_RETURN(o->train_steps, parse_in("--train-steps", *v, kOptimizerRanges.train_steps));
    if (!args.get("warmup-steps")) o->warmup_steps = default_warmup_steps(o->train_steps);
  }
  if (auto v = args.get("adam-beta1")) {
    SPPLAN_ASSIGN_OR_RETURN(o->adam_beta1, parse_in("--adam-beta1", *v, kOptimizerRanges.adam_beta));
  }
  if (auto v = args.get("adam-beta2")) {
    SPPLAN_ASSIGN_OR_RETURN(o->adam_beta2, parse_in("--adam-beta2", *v, kOptimizerRanges.adam_beta));
  }
  if (auto v = args.get("adam-eps")) {
    SPPLAN_ASSIGN_OR_RETURN(o->adam_eps, parse_in("--adam-eps", *v, kOptimizerRanges.adam_eps));
  }
  return Status::ok();
}

}  // namespace spplan
