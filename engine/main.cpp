// spplan-engine: the LibTorch training engine behind `spplan run`.
//   spplan-engine run (--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K]
//                     [--data FILE] [--seed X] [--save DIR] [--save-every K] [--resume DIR] [--json]
// With --nproc, this process checks the inputs, then starts N ranks of itself (launcher.hpp).
// Without --nproc, it is one rank started by torchrun or Slurm (RANK, WORLD_SIZE, ... set).
//   spplan-engine calibrate [--out FILE.toml] [--gpu PRESET|FILE] [--model NAME,...]   (calibrate.hpp)
//   spplan-engine validate engine [--json] [--quick | --long] [--calibration FILE.toml] [--gpu PRESET|FILE]  (validate.hpp)
#include <cstring>
#include <iostream>

#include <torch/cuda.h>

#include "engine/device/alloc_conf.hpp"
#include "engine/device/memory_meter.hpp"
#include "engine/measure/calibrate.hpp"
#include "engine/measure/calibrate_flags.hpp"
#include "engine/measure/validate.hpp"
#include "engine/run/launcher.hpp"
#include "engine/run/options.hpp"
#include "engine/run/worker.hpp"
#include "planner/core/args.hpp"
#include "planner/core/suggest.hpp"
#include "planner/core/version.hpp"

namespace {

int bad_input(const spplan::Status& s) { return spplan::engine::print_bad_input(s); }

constexpr const char* kUsage =
    "usage: spplan-engine run (--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K] [--json]\n"
    "       spplan-engine calibrate [--out FILE.toml] [--gpu PRESET|FILE] [--model NAME,...]\n"
    "       spplan-engine validate engine [--json] [--quick | --long] [--calibration FILE.toml] [--gpu G] [--shard I/N]\n"
    "       spplan-engine run --help: every flag of run, its allowed values and default\n"
    "       spplan-engine --version\n"
    "The LibTorch training engine behind `spplan run`, `spplan calibrate` and `spplan validate engine`.\n";

// `run --help` (or -h right after run): the run flag table; before LibTorch starts anything.
bool asks_for_help(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[2], "-h") == 0) return true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << spplan::version_line("spplan-engine") << "\n";
    return 0;
  }
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (std::strcmp(argv[1], "calibrate") == 0 && asks_for_help(argc, argv)) {
    std::cout << "usage: spplan calibrate [--out FILE.toml] [--gpu PRESET|FILE] [--model NAME[,NAME...]]\n"
                 "Measures this machine's kernels, fits the costmodel's factors and writes a GPU file.\n"
                 "\nflags (V: the value it takes):\n"
              << spplan::flags_help(spplan::engine::calibrate_flag_specs())
              << "\nexit codes: 0 written, 1 a measurement could not be fitted, 2 bad input\n";
    return 0;
  }
  if (std::strcmp(argv[1], "validate") == 0 && asks_for_help(argc, argv)) {
    std::cout << "usage: spplan validate engine [--json] [--quick | --long] [--calibration FILE.toml] [--gpu PRESET|FILE] "
                 "[--shard I/N]\n"
                 "Runs the engine's case list and compares each measured peak, host memory and step time with "
                 "the costmodel's prediction.\n"
                 "\nflags (V: the value it takes):\n"
              << spplan::flags_help(spplan::engine::validate_flag_specs())
              << "\nexit codes: 0 every case ran as expected, 1 a case failed or a boundary went the wrong way, "
                 "2 bad input\n";
    return 0;
  }
  if (std::strcmp(argv[1], "run") == 0 && asks_for_help(argc, argv)) {
    std::cout << "usage: spplan run (--plan FILE.toml | --model M --seq S --sp P [knobs]) --nproc N [--steps K] [--json]\n"
                 "Trains the plan with the LibTorch engine: real Ulysses all-to-alls over c10d (Gloo on CPU, NCCL on "
                 "GPUs), ZeRO 0-3, offload, checkpointing, tiling; measured against the planner's prediction.\n"
                 "\nflags (V: the value it takes):\n"
              << spplan::flags_help(spplan::engine::run_flag_specs())
              << "\nexit codes: 0 trained, 1 failed, 2 bad input, 3 out of device memory\n";
    return 0;
  }
  spplan::engine::apply_alloc_conf();  // before LibTorch's CUDA allocator reads it (alloc_conf.hpp)
  spplan::engine::install_counting_allocator();  // before any tensor exists, so every byte is counted
  using namespace spplan::engine;
  if (argc >= 2 && std::strcmp(argv[1], "calibrate") == 0) {
    if (!is_launched_child()) return calibrate_main(argc, argv);
    auto env = read_dist_env();
    if (!env.ok() || !env->has_value()) return bad_input(spplan::Status::invalid("calibrate: bad rank environment"));
    return calibrate_comm_rank(**env);
  }
  if (argc >= 2 && std::strcmp(argv[1], "validate") == 0) {
    // Device properties only: no CUDA context in this process, which only starts the runs.
    ValidateDevice device;
    if (torch::cuda::is_available()) {
      device.cuda_gpus = static_cast<int64_t>(torch::cuda::device_count());
      device.device = {cuda_device_name(0), cuda_device_total_bytes(0)};
    }
    return validate_main(argc, argv, device);
  }
  if (argc < 2 || std::strcmp(argv[1], "run") != 0) {
    const std::string name = argc < 2 ? "" : argv[1];
    return bad_input(spplan::Status::invalid("subcommand \"" + name + "\" of spplan-engine is not known" +
                                             spplan::did_you_mean(name, {"run", "calibrate", "validate"}) +
                                             " (allowed: run, calibrate, validate)"));
  }
  auto options = parse_run_options(argc, argv, 2);
  if (!options.ok()) return bad_input(options.status());
  if (options->nproc && !is_launched_child()) {
    if (auto s = check_inputs(&*options, *options->nproc); !s) return bad_input(s);
    return launch_local(*options->nproc, argc, argv);
  }
  auto env = read_dist_env();
  if (!env.ok()) return bad_input(env.status());
  if (!env->has_value()) {
    return bad_input(spplan::Status::invalid(
        "--nproc: missing (required: the number of local ranks to start, unless RANK and WORLD_SIZE are set as "
        "torchrun and Slurm do)"));
  }
  return run_rank(*options, **env);
}
