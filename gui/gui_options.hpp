// The command line of spplan-gui (DESIGN.md): [--model M --gpu G --gpus N --gpus-per-node K --seq S]
// [--lengths FILE [--packing P]] [--screenshot FILE.png] [--screenshots DIR] (DIR: one PNG per tab, the README's pictures). Values are checked with the CLI's own parse and load functions, so a
// bad value gets the CLI's message; main() prints it on one line and exits 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/core/args.hpp"
#include "planner/core/status.hpp"

namespace spplan::gui {

struct GuiOptions {
  std::string model = "qwen3-4b";
  std::string gpu = "h100-80gb";
  std::string gpus = "8";
  std::optional<std::string> gpusPerNode;  // unset: the GPU preset's
  std::string seq = "128k";
  std::optional<std::string> lengths;  // the corpus's lengths file (the Corpus input); unset: none
  std::optional<std::string> packing;  // with lengths; unset: bfd
  std::optional<std::string> screenshotPath;
  std::optional<std::string> screenshotsDir;
  bool inputsGiven = false;  // any of --model .. --packing: otherwise the saved session is restored
};

// argv as main() receives it; arguments not starting with "--" are left to Qt (-platform ...).
Result<GuiOptions> parseGuiOptions(int argc, const char* const* argv);

// The flags parseGuiOptions reads, with their help.
std::vector<FlagSpec> guiFlagSpecs();

// The text to print for --help, -h or --version anywhere on the command line (before Qt sees -h,
// which it would ignore and start the window); nullopt when none is asked for.
std::optional<std::string> helpOrVersion(int argc, const char* const* argv);

}  // namespace spplan::gui
