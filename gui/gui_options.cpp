#include "gui/gui_options.hpp"

#include "planner/config/loaders.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/version.hpp"
#include "planner/corpus/corpus.hpp"

namespace spplan::gui {

std::vector<FlagSpec> guiFlagSpecs() {
  const GuiOptions d;  // the defaults
  return {{"model", true, "the model to plan", kModelAllowed,
           d.model + " (without any of --model..--seq: the last session's inputs)"},
          {"gpu", true, "the accelerator", "a GPU preset or a GPU TOML file", d.gpu},
          {"gpus", true, "GPUs in the cluster", "an integer >= 1", d.gpus},
          {"gpus-per-node", true, "GPUs per node, overriding the GPU file's", "an integer 1..65536", "the GPU file's"},
          {"seq", true, "sequence length in tokens", kSeqLenForms, d.seq},
          {"lengths", true, "the corpus's document lengths in tokens, as spplan plan --lengths takes them",
           "a CSV or JSON lengths file", "no corpus"},
          {"packing", true, "how documents fill each sequence (with --lengths)", "wrapped, bfd, none", "bfd"},
          {"screenshot", true, "compute, save the window as a PNG and exit (works with QT_QPA_PLATFORM=offscreen)",
           "a .png path", "none: the window stays open"},
          {"screenshots", true, "compute, save one PNG per tab into the folder and exit", "a folder",
           "none: the window stays open"}};
}

std::optional<std::string> helpOrVersion(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--version") return version_line("spplan-gui") + "\n";
    if (word == "--help" || word == "-h") {
      return "usage: spplan-gui [--model M --gpu G --gpus N --gpus-per-node K --seq S] [--lengths FILE [--packing P]] "
             "[--screenshot FILE.png] [--screenshots DIR]\n"
             "The planner's window: ranked plans, memory, the simulated step, what to rent, SP scaling, and "
             "running a plan. Qt's own options (-platform NAME, ...) pass through.\n\nflags (V: the value it takes):\n" +
             flags_help(guiFlagSpecs()) + "\nexit codes: 0 closed or screenshots written, 2 bad input\n";
    }
  }
  return std::nullopt;
}

Result<GuiOptions> parseGuiOptions(int argc, const char* const* argv) {
  SPPLAN_ASSIGN_OR_RETURN(const Args args, Args::parse(argc, argv, 1, guiFlagSpecs()));
  GuiOptions options;
  if (auto v = args.get("model")) options.model = *v;
  if (auto v = args.get("gpu")) options.gpu = *v;
  if (auto v = args.get("gpus")) options.gpus = *v;
  if (auto v = args.get("seq")) options.seq = *v;
  options.gpusPerNode = args.get("gpus-per-node");
  options.lengths = args.get("lengths");
  options.packing = args.get("packing");
  options.screenshotPath = args.get("screenshot");
  options.screenshotsDir = args.get("screenshots");
  for (const char* flag : {"model", "gpu", "gpus", "gpus-per-node", "seq", "lengths", "packing"}) options.inputsGiven |= args.has(flag);

  // The same checks, in the same words, as `spplan plan`.
  SPPLAN_RETURN_IF_ERROR(load_model(options.model).status());
  SPPLAN_RETURN_IF_ERROR(load_gpu(options.gpu).status());
  SPPLAN_RETURN_IF_ERROR(parse_int("--gpus", options.gpus, 1, 1 << 24).status());
  if (options.gpusPerNode) {
    SPPLAN_RETURN_IF_ERROR(parse_int("--gpus-per-node", *options.gpusPerNode, 1, 1 << 16).status());
  }
  SPPLAN_RETURN_IF_ERROR(parse_seq_len("--seq", options.seq).status());
  // As cli/corpus_flags.cpp corpus_options, in its words.
  if (options.packing && !options.lengths) {
    return Status::invalid("--packing: needs --lengths (allowed: with a corpus's lengths file)");
  }
  if (options.lengths) SPPLAN_RETURN_IF_ERROR(corpus::read_lengths_file(*options.lengths).status());
  if (options.packing) SPPLAN_RETURN_IF_ERROR(corpus::parse_packing("--packing", *options.packing).status());
  if (options.screenshotPath && options.screenshotPath->empty()) {
    return Status::invalid("--screenshot: empty value (allowed: a path ending in .png)");
  }
  if (options.screenshotsDir && options.screenshotsDir->empty()) {
    return Status::invalid("--screenshots: empty value (allowed: a folder)");
  }
  return options;
}

}  // namespace spplan::gui
