#include "cli/common.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include "planner/check/user_runs.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/optimizer_spec.hpp"
#include "planner/config/plan_rules.hpp"
#include "planner/config/renter_settings.hpp"
#include "planner/config/stack_flags.hpp"
#include "planner/config/toml_reader.hpp"
#include "planner/core/parse.hpp"
#include "planner/config/knobs.hpp"

namespace spplan::cli {

Result<Args> parse_flags(int argc, const char* const* argv, const std::vector<FlagSpec>& specs) {
  SPPLAN_ASSIGN_OR_RETURN(Args args, Args::parse(argc, argv, 1, specs));
  if (!args.positional().empty()) {
    return Status::invalid(std::string(argv[0]) + ": unexpected argument \"" + args.positional().front() +
                           "\" (allowed: flags only)");
  }
  return args;
}

std::vector<FlagSpec> cluster_flag_specs(bool with_seq) {
  const std::vector<FlagSpec> cluster{
      {"model", true, "the model to train", kModelAllowed, "required"},
      {"gpu", true, "the accelerator every GPU of the cluster is", kGpuAllowed, "required"},
      {"gpus", true, "GPUs in the cluster (GPUs = dp x sp); above one node, whole nodes",
       "an integer 1.." + std::to_string(kMaxGpus), "required unless --nodes"},
      {"gpus-per-node", true, "GPUs per node, overriding the GPU file's gpus_per_node", "an integer 1..65536",
       "the GPU file's"},
      {"nodes", true, "nodes in the cluster; GPUs = nodes x GPUs per node", "an integer >= 1", "from --gpus"},
      {"trainer", true, "the software that runs the plan: what it holds, which layouts it runs, which exports launch it",
       "a trainer preset (" + join(trainer_names()) + ") or a trainer TOML file (configs/trainers/README.md)", "arctic"}};
  const std::vector<FlagSpec> renter{
      {"headroom", true, "GPU memory a plan must leave free, % of the device, beyond the planner's own margins",
       "a number from 0 to " + format_number(kMaxHeadroomPct), "0"},
      {"price-per-gpu-hour", true, "what one GPU costs per hour, in $, overriding the GPU file's price_per_gpu_hour",
       "a number >= 0 (0: a machine already paid for)", "the GPU file's"},
      {"price-per-node-hour", true, "what one node costs per hour, in $ (divided over its GPUs)",
       "a number >= 0 (0: a machine already paid for)",
       "the GPU file's price_per_gpu_hour x GPUs per node"}};
  // The stack's flags after --trainer, whose defaults they override (planner/config/stack_flags.hpp).
  std::vector<FlagSpec> specs = with(with(cluster, stack_flag_specs()), renter);
  if (with_seq) specs.push_back(seq_flag_spec());
  return specs;
}

FlagSpec seq_flag_spec() {
  return {"seq", true, "sequence length in tokens (per sequence)", kSeqAllowed, "required"};
}

std::vector<FlagSpec> with(std::vector<FlagSpec> base, const std::vector<FlagSpec>& extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

Status apply_price_flags(const Args& args, GpuSpec* gpu) {
  return apply_price(args.get("price-per-gpu-hour"), args.get("price-per-node-hour"), gpu);
}

Status apply_headroom_flag(const Args& args, PlanSpec* plan) {
  if (auto v = args.get("headroom")) return apply_headroom(*v, plan);
  return Status::ok();
}

const MeasuredAccuracy* measured_accuracy() {
  // Read once: every report of the process holds its plans against the same runs. Absent (an
  // installed binary without the source tree's results): the verdicts say nothing was measured.
  static const std::optional<MeasuredAccuracy> table = []() -> std::optional<MeasuredAccuracy> {
    // The user's own runs (SPPLAN_RUNS, planner/check/user_runs.hpp) beside the shipped ones.
    if (std::vector<std::string> all = check::runs_files_from_environment(); !all.empty()) {
      const std::vector<std::string> shipped = check::shipped_results();
      all.insert(all.begin(), shipped.begin(), shipped.end());
      if (auto with_yours = MeasuredAccuracy::load(all); with_yours.ok()) return std::move(*with_yours);
      else warn(std::string(check::kRunsVariable) + ": " + with_yours.status().message() + "; your runs are not counted");
    }
    auto loaded = MeasuredAccuracy::load_dir(MeasuredAccuracy::default_dir());
    if (!loaded.ok()) return std::nullopt;
    return std::move(*loaded);
  }();
  return table ? &*table : nullptr;
}

MemoryVerdict verdict_of(const PlanSpec& plan, const costmodel::Estimate& estimate) {
  MemoryVerdict verdict = plan_verdict(plan, estimate, measured_accuracy());
  verdict.words += check::your_runs_words(plan, check::runs_files_from_environment());
  return verdict;
}

Result<PlanSpec> plan_from_flags(const Args& args, bool with_seq) {
  PlanSpec plan;
  SPPLAN_RETURN_IF_ERROR(apply_headroom_flag(args, &plan));
  SPPLAN_ASSIGN_OR_RETURN(const std::string model, args.require("model", "a model preset or file"));
  SPPLAN_ASSIGN_OR_RETURN(plan.model, load_model(model));
  SPPLAN_ASSIGN_OR_RETURN(const std::string gpu, args.require("gpu", "a GPU preset or file"));
  SPPLAN_ASSIGN_OR_RETURN(plan.cluster.gpu, load_gpu(gpu));
  SPPLAN_ASSIGN_OR_RETURN(plan.stack, load_trainer(args.get("trainer").value_or("arctic"), "--trainer"));
  SPPLAN_RETURN_IF_ERROR(apply_stack_flags(args, &plan.stack));  // after --trainer: they override its defaults
  if (auto v = args.get("gpus-per-node")) {
    SPPLAN_ASSIGN_OR_RETURN(plan.cluster.gpu.gpus_per_node, parse_int("--gpus-per-node", *v, 1, 1 << 16));
  }
  SPPLAN_RETURN_IF_ERROR(apply_price_flags(args, &plan.cluster.gpu));
  hold_against_measured(&plan, measured_accuracy());  // after the GPU and the trainer: the searches rank by it
  if (auto v = args.get("nodes")) {
    SPPLAN_ASSIGN_OR_RETURN(const int64_t nodes, parse_int("--nodes", *v, 1, 1 << 20));
    plan.cluster.num_gpus = nodes * plan.cluster.gpu.gpus_per_node;
    // The searches visit every GPU count up to num_gpus: bound it as --gpus is bounded.
    if (plan.cluster.num_gpus > kMaxGpus) {
      return Status::invalid("--nodes: value " + *v + " x " + std::to_string(plan.cluster.gpu.gpus_per_node) +
                             " GPUs per node is " + std::to_string(plan.cluster.num_gpus) + " GPUs (allowed: at most " +
                             std::to_string(kMaxGpus) + " GPUs in all)");
    }
    if (auto g = args.get("gpus")) {
      SPPLAN_ASSIGN_OR_RETURN(const int64_t gpus, parse_int("--gpus", *g, 1, kMaxGpus));
      if (gpus != plan.cluster.num_gpus) {
        return Status::invalid("--gpus: value " + *g + " disagrees with --nodes " + *v + " x " +
                               std::to_string(plan.cluster.gpu.gpus_per_node) + " GPUs per node (allowed: " +
                               std::to_string(plan.cluster.num_gpus) + ", or omit one of them)");
      }
    }
  } else {
    SPPLAN_ASSIGN_OR_RETURN(const std::string gpus, args.require("gpus", "the number of GPUs"));
    SPPLAN_ASSIGN_OR_RETURN(plan.cluster.num_gpus, parse_int("--gpus", gpus, 1, kMaxGpus));
  }
  SPPLAN_RETURN_IF_ERROR(check_cluster_shape(plan.cluster, flag_where));  // whole nodes, as exported
  if (with_seq) {
    SPPLAN_ASSIGN_OR_RETURN(const std::string seq, args.require("seq", "a sequence length such as 128k"));
    SPPLAN_ASSIGN_OR_RETURN(plan.seq_len, parse_seq_len("--seq", seq));
  }
  // A plan made here is a fine-tune unless the optimizer flags say otherwise (plan, estimate).
  plan.optimizer = fine_tuning_recipe();
  SPPLAN_RETURN_IF_ERROR(apply_optimizer_flags(args, &plan.optimizer));
  SPPLAN_RETURN_IF_ERROR(check_optimizer(plan.optimizer, optimizer_flag));
  return plan;
}

Status check_not_an_input(const std::string& flag, const std::string& out, const std::vector<NamedPath>& inputs) {
  return check_outputs_apart(inputs, {{flag, out, PathRole::kFile}});
}

void add_trainer_files(const TrainingStack& stack, const std::string& flag, std::vector<NamedPath>* inputs) {
  if (stack.record == nullptr) return;
  const std::vector<std::string>& files = stack.record->files;
  for (size_t k = 0; k < files.size(); ++k) {
    // The record as the user named it, when a user named a file: the message then shows their path.
    const bool given = k == 0 && stack.trainer != stack.record->name;  // a preset goes by its name
    inputs->push_back({k == 0 ? flag : flag + " base", given ? stack.trainer : files[k], PathRole::kFile});
  }
}

void add_gpu_files(const std::string& file, const std::string& flag, std::vector<NamedPath>* inputs) {
  inputs->push_back({flag, file, PathRole::kFile});
  // load_gpu read the file already: one that no longer parses names no base to add.
  const auto table = parse_toml_file(file);
  if (!table.ok()) return;
  if (const auto base = (*table)["base"].value<std::string>()) {
    if (const auto preset = gpu_file(*base); preset.ok()) inputs->push_back({flag + " base", *preset, PathRole::kFile});
  }
}

std::vector<NamedPath> plan_input_files(const std::string& plan_path, const PlanSpec& plan) {
  std::vector<NamedPath> inputs{{"--plan", plan_path, PathRole::kFile}};
  // load_plan read the plan already: a parse that fails now names no preset to add.
  if (const auto table = parse_toml_file(plan_path); table.ok()) {
    using FileOf = Result<std::string> (*)(std::string_view);
    for (const auto& [key, file_of] : {std::pair<const char*, FileOf>{"model", &model_file}, {"gpu", &gpu_file}}) {
      const auto preset = (*table)[key]["preset"].value<std::string>();
      if (!preset) continue;
      if (const auto file = file_of(*preset); file.ok()) inputs.push_back({std::string("--plan's ") + key, *file, PathRole::kFile});
    }
  }
  add_trainer_files(plan.stack, "--plan's trainer", &inputs);
  return inputs;
}

int fail(const Status& status) {
  // printable(): a newline inside a value (a TOML string, a flag) would break the one-line rule.
  std::cerr << "spplan: " << printable(status.message()) << "\n";
  // A file that cannot be read or written is a bad flag value too; only a bug is something else.
  return status.code() == Status::Code::kInternal ? kExitInternal : kExitBadInput;
}

void warn(const std::string& message) { std::cerr << "spplan: warning: " << printable(message) << "\n"; }

}  // namespace spplan::cli
