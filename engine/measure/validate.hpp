// `spplan-engine validate engine [--json] [--quick | --long | --ring | --moe | --window | --packed]
// [--calibration FILE.toml] [--gpu PRESET|FILE.toml]
// [--shard I/N]`:
// the costmodel's predictions against the engine's measured runs on this machine (DESIGN.md
// `spplan validate engine`). Each case (validate_cases.hpp) runs `spplan-engine run ... --json` as
// a child process (the same launcher path as `spplan run`); memory and step time are predicted for
// the same plan on the calibrated spec: --calibration, or `spplan-engine calibrate` run first.
// - CPU: tiny-llama cases; the ranks share the machine, so each is priced on 1/world of it.
// - CUDA (`gpus` devices): 0.6B-8B cases on all of them, each priced twice: with the calibrated
//   spec (the d % columns) and with the GPU preset (--gpu, else the preset that matches the device;
//   the "preset d %" columns); then the boundary cases: the planner's max-seq on the calibrated
//   spec must run, and 1.1x of it must stop with the engine's out-of-memory report.
// - --packed (CPU): packed documents (validate_cases.hpp cpu_packed_cases), each on a token file
//   of documents written to a temporary folder for the run; a row names its documents and what
//   the costmodel priced ("priced_as").
// - --long (CPU): the long-sequence memory-only cases instead (validate_cases.hpp long_cpu_cases:
//   one step each, memory compared, the time columns "-" and out of the time errors).
// --shard I/N runs every N-th case from the I-th (a GPU lease with a per-command time limit runs the
// list as N commands). A report: exit 0 when every case ran as expected (no accuracy targets are enforced), 1 when a
// case failed or a boundary case went the wrong way, 2 on bad flags.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/run/predict.hpp"
#include "planner/core/args.hpp"

namespace spplan::engine {

struct ValidateDevice {
  int64_t cuda_gpus = 0;  // 0: this CPU
  CudaDevice device;      // device 0, when cuda_gpus > 0
};

// The flags of `validate engine`, with their help (`spplan validate engine --help` prints them).
std::vector<FlagSpec> validate_flag_specs();

int validate_main(int argc, char** argv, const ValidateDevice& device);

}  // namespace spplan::engine
