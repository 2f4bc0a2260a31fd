// The `spplan` front end: argv to a subcommand (DESIGN.md command contract). Kept out of main()
// so that the command-line fuzz target (fuzz/) drives exactly what the program does.
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/common.hpp"

#ifdef SPPLAN_HAVE_SIMULATOR
int cmd_simulate(int argc, const char* const* argv);  // cli/cmd_simulate.cpp (global namespace)
#endif

namespace spplan::cli {
namespace {

constexpr const char* kCommands = "estimate, plan, fit, rent, max-seq, sweep, export, simulate, run, validate, calibrate";

constexpr const char* kUsage =
    "usage: spplan <command> [flags]\n"
    "commands:\n"
    "  estimate  --model M --gpu G --gpus N --seq S --sp P [knobs] [--json]\n"
    "  plan      --model M --gpu G --gpus N --seq S [knobs] [--top K] [--out FILE.toml] [--simulate]\n"
    "            [--show-rejected] [--json]     (knob flags fix those knobs; exit 1 when nothing fits)\n"
    "  fit       --model M --gpu G --gpus N --seq S [knobs] [--json] (exit 0 fits, 1 does not)\n"
    "  rent      --model M --seq S [knobs] [--json]     (every GPU preset at 1, 2, 4 nodes: cheapest)\n"
    "  max-seq   --model M --gpu G --gpus N [knobs] [--granularity T] [--json]  (knob flags fix those knobs)\n"
    "  sweep     --model M --gpu G --gpus N [--seq-from A --seq-to B] [--csv|--json]\n"
    "  export    --plan FILE.toml --format deepspeed|accelerate|arctic|torchrun\n"
    "  simulate  --plan FILE.toml [--trace out.json] [--svg out.svg] [--no-overlap] [--events N] [--json]\n"
    "  run       (--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K] [--json]\n"
    "            [--data FILE[,FILE...]] [--eos-id N] [--shuffle] [--seed X] [--save DIR] [--save-every K]\n"
    "            [--resume DIR] [--init-from HF_DIR] [--export-hf DIR] [--export-dtype fp32|bf16]\n"
    "            [--lr X] [--warmup-steps K] [--lr-schedule constant|cosine|linear] [--min-lr X]\n"
    "            [--weight-decay X] [--grad-clip X] [--adam-beta1 X] [--adam-beta2 X] [--adam-eps X]\n"
    "            [--log FILE.jsonl] [--eval-data FILE] [--eval-every K] [--gpu G]\n"
    "  validate  published FILE.csv | engine [--json] [--quick] [--calibration FILE] [--gpu G]\n"
    "  calibrate [--out FILE.toml] [--gpu G] [--model M[,M...]]\n"
    "knobs: --zero 0|1|2|3 --offload-optimizer none|cpu|nvme --offload-params none|cpu|nvme\n"
    "       --act-ckpt none|full|offload --tiled-mlp --tiled-loss --micro-batch B --grad-accum K\n"
    "       --sp-comm-dtype bf16|fp32 --precision bf16|fp32\n"
    "stack: --trainer arctic|hf|liger|engine --attention flash2|sdpa\n"
    "sequence lengths: 131072, 128k, 1.5M (k = 1024, M = 1048576)\n";

}  // namespace

int run_command(int argc, const char* const* argv) {
  if (argc < 2) {
    return fail(Status::invalid("command: missing (allowed: " + std::string(kCommands) + "; see spplan --help)"));
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "help") == 0) {
    std::cout << kUsage;
    return kExitOk;
  }
  const std::string command = argv[1];
  const int sub_argc = argc - 1;
  const char* const* sub_argv = argv + 1;
  if (command == "estimate") return cmd_estimate(sub_argc, sub_argv);
  if (command == "plan") return cmd_plan(sub_argc, sub_argv);
  if (command == "fit") return cmd_fit(sub_argc, sub_argv);
  if (command == "rent") return cmd_rent(sub_argc, sub_argv);
  if (command == "max-seq") return cmd_max_seq(sub_argc, sub_argv);
  if (command == "sweep") return cmd_sweep(sub_argc, sub_argv);
  if (command == "export") return cmd_export(sub_argc, sub_argv);
  if (command == "validate") return cmd_validate(sub_argc, sub_argv);
#ifdef SPPLAN_HAVE_SIMULATOR
  if (command == "simulate") return ::cmd_simulate(sub_argc, sub_argv);
#else
  // An engine-only build (SPPLAN_ENGINE_ONLY, a GPU node) leaves out the simulator, which needs Boost.
  if (command == "simulate") return fail(Status::invalid("simulate: the simulator is not built into this spplan"));
#endif
  if (command == "run" || command == "calibrate") return cmd_forward_to_engine(argc, argv);
  return fail(Status::invalid("command \"" + command + "\" is not known (allowed: " + kCommands + ")"));
}

}  // namespace spplan::cli
