#include "engine/measure/calibrate_flags.hpp"

namespace spplan::engine {

std::vector<FlagSpec> calibrate_flag_specs() {
  return {{"out", true, "write the calibrated GPU file here (configs/gpus/cpu-host.toml is what run and validate "
                        "look for on a CPU)", "a .toml path", "printed on stdout"},
          {"gpu", true, "on a CUDA device: the preset or file whose peaks, memory, links and price the measured "
                        "efficiencies apply to", "a GPU preset or GPU TOML file (only with a CUDA device)",
           "the preset that matches the device"},
          {"model", true, "whose GEMM shapes to measure", "model presets or files, separated by commas",
           "tiny-llama on a CPU; qwen3-0.6b to llama-3.1-8b on a GPU"}};
}

}  // namespace spplan::engine
