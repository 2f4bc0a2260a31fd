#include "cli/command_table.hpp"

#include "cli/common.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/stack_flags.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/suggest.hpp"
#include "planner/export/export.hpp"

namespace spplan::cli {
namespace {

constexpr const char* kSearchExits = "0 some plan fits, 1 nothing fits, 2 bad input";

std::vector<Command> build_commands() {
  std::vector<Command> c{
      {"estimate", "--model M --gpu G --gpus N --seq S --sp P [knobs] [--json]",
       "Prices one knob set: peak memory per GPU by category, host memory, step time, tokens/s, MFU and "
       "$ per million tokens.",
       "0 priced (fitting or not: see fits), 2 bad input", estimate_flag_specs()},
      {"plan", "--model M --gpu G --gpus N --seq S [knobs] [--top K] [--out FILE.toml] [--simulate] [--json]",
       "Searches every knob set the flags leave open, drops those that do not fit and ranks the rest by "
       "tokens/s; each knob flag given fixes that knob.",
       kSearchExits, plan_flag_specs()},
      {"fit", "--model M --gpu G --gpus N --seq S [knobs] [--json]",
       "Says whether any knob set fits, and names the smallest GPU count that fits.", kSearchExits,
       fit_flag_specs()},
      {"rent", "--model M --seq S [knobs] [--trainer T] [--json]",
       "Every GPU preset at 1, 2 and 4 nodes: the best plan's $ per million tokens, step time, tokens/s and "
       "longest sequence; the cheapest and fastest marked.",
       "0 some option fits, 1 none does, 2 bad input", rent_flag_specs()},
      {"max-seq", "--model M --gpu G --gpus N [knobs] [--granularity T] [--json]",
       "The longest sequence that fits, counting the allocator slack, with the margin without it and the "
       "limit that stops it; each knob flag fixes that knob, the rest are searched.",
       "0 answered, 2 bad input", max_seq_flag_specs()},
      {"sweep", "--model M --gpu G --gpus N [--seq-from A --seq-to B] [--csv|--json]",
       "For each valid sp (on a trainer that runs a ring and no Ulysses, each ring degree cp) and each sequence "
       "length (doubling from A to B): the best plan with that degree, or that nothing fits.",
       "0 answered, 2 bad input", sweep_flag_specs()},
      {"export", "--plan FILE.toml --format " + join(export_format_names(), "|") + " [--out FILE]",
       "Writes a plan as the configuration its trainer reads (DeepSpeed JSON, Accelerate YAML, "
       "ArcticTraining recipe, torchrun, Megatron-LM or ms-swift script, TorchTitan job config, Axolotl YAML); a format of "
       "another trainer, or one that "
       "cannot express the plan, is refused.",
       "0 written, 2 bad input or a plan the target cannot express", export_flag_specs()}};
#ifdef SPPLAN_HAVE_SIMULATOR
  c.push_back({"simulate", "--plan FILE.toml [--trace out.json] [--svg out.svg] [--no-overlap] [--events N] [--json]",
               "Simulates one training step of a plan on compute, communication, copy and host resources: step "
               "time, exposed communication, the memory peak.",
               "0 simulated, 2 bad input", simulate_flag_specs()});
#endif
  c.push_back({"run", "(--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K] [--json]",
               "Trains the plan with spplan's LibTorch engine (spplan-engine run; its --help lists the flags).",
               "0 trained, 1 failed, 2 bad input, 3 out of device memory", {}, true});
  c.push_back({"validate",
               "published FILE.csv [--json] | engine [--quick | --long | --ring | --moe | --window] [--json] [--calibration FILE] "
               "[--gpu G]",
               "Predictions against published runs (published), or against the engine's own runs (engine, "
               "spplan-engine validate).",
               "0 every target met, 1 a target missed, 2 bad input", validate_flag_specs()});
  c.push_back({"check", "--plan P.toml RUNLOG... [--runs FILE[,FILE]] [--json]",
               "A run's logs (trainer_state.json, ArcticTraining metrics, DeepSpeed, spplan run, torch or nvidia-smi "
               "memory) against its plan: predicted and measured peak memory, step time and tokens/s with the "
               "measured band, and what says the run is not the plan (a sequence not split, throughput above peak).",
               "0 as planned, 1 a finding says the run is not the plan, 2 bad input", check_flag_specs()});
  c.push_back({"calibrate", "[--out FILE.toml] [--gpu G] [--model M[,M...]] | --from-run --plan P.toml RUNLOG... --out GPU.toml",
               "Measures this machine's kernels and writes a GPU file the planner prices with (spplan-engine "
               "calibrate).",
               "0 written, 2 bad input", {}, true});
  c.push_back({"lengths", "DATA... --eos-id N [--out FILE] [--json]",
               "Counts the documents of token files (scripts/tokenize.py's *.u16.bin / *.u32.bin, each document ended by "
               "the EOS id) and writes their lengths as the lengths file plan --lengths reads (docs/lengths.md).",
               "0 written, 2 bad input", lengths_flag_specs()});
  return c;
}

// "  estimate  --model M ..." lines, names padded to one column.
std::string command_lines() {
  std::string text;
  for (const Command& c : commands()) {
    text += "  " + c.name + std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') + c.usage + "\n";
  }
  return text;
}

bool takes_flag(const Command& command, const std::string& name) {
  for (const FlagSpec& f : command.flags) {
    if (f.name == name) return true;
  }
  return false;
}

}  // namespace

FlagSpec json_flag_spec() { return {"json", false, "print one JSON object (the Python package's dict) instead of text"}; }

FlagSpec conservative_flag_spec() {
  return {"conservative", false,
          "answer at the measured band's edge: leave free the most GPU memory runs of this trainer and GPU needed "
          "beyond the prediction (with --headroom, the larger of the two)"};
}

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = build_commands();
  return kCommands;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string command_names() {
  std::vector<std::string> names;
  for (const Command& c : commands()) names.push_back(c.name);
  return join(names);
}

Status unknown_command(const std::string& name) {
  std::vector<std::string> names;
  for (const Command& c : commands()) names.push_back(c.name);
  return Status::invalid("command \"" + name + "\" is not known" + did_you_mean(name, names) + " (allowed: " +
                         command_names() + ")");
}

namespace {

// `--name a|b|c`: a knob or stack flag with the values its table allows (the parser's own), for
// the program's summary.
std::string flag_choices(const std::string& name) {
  for (const std::vector<FlagSpec>& table : {knob_flag_specs(), stack_flag_specs()}) {
    for (const FlagSpec& f : table) {
      if (f.name != name) continue;
      std::string values = f.allowed;
      for (size_t at = values.find(", "); at != std::string::npos; at = values.find(", ", at)) values.replace(at, 2, "|");
      return "--" + name + " " + values;
    }
  }
  return "--" + name;
}

}  // namespace

std::string program_help() {
  return "usage: spplan <command> [flags]        spplan <command> --help: its flags, allowed values, defaults\n"
         "       spplan --version\n"
         "commands:\n" +
         command_lines() +
         "knobs: --sp P --cp C " + flag_choices("cp-comm") + " " + flag_choices("zero") + "\n" +
         "       " + flag_choices("offload-optimizer") + " " + flag_choices("offload-params") + "\n" +
         "       " + flag_choices("act-ckpt") + " --tiled-mlp --tiled-loss --micro-batch B --grad-accum K\n" +
         "       " + flag_choices("sp-comm-dtype") + " " + flag_choices("precision") +
         " --reduce-bucket E --prefetch-bucket E\n"
         "       --no-tiled-mlp --no-tiled-loss\n"
         "stack: --trainer " + join(trainer_presets(), "|") + "|FILE.toml " + flag_choices("attention") + "\n"
         "       --freeze-encoders --train-encoders (a multimodal model's vision tower and projector)\n"
         "sequence lengths: " + std::string(kSeqLenForms) + "\n";
}

std::string command_help(const Command& command) {
  std::string text = "usage: spplan " + command.name + " " + command.usage + "\n" + command.summary + "\n";
  if (!command.flags.empty()) text += "\nflags (V: the value it takes):\n" + flags_help(command.flags);
  if (takes_flag(command, "model") || takes_flag(command, "gpu")) text += "\n";
  if (takes_flag(command, "model")) text += "model presets: " + join(model_presets()) + "\n";
  if (takes_flag(command, "gpu")) text += "GPU presets: " + join(gpu_presets()) + "\n";
  text += "\nexit codes: " + command.exit_codes + "\n";
  return text;
}

}  // namespace spplan::cli
