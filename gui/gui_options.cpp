#include "gui/gui_options.hpp"

#include "planner/config/loaders.hpp"
#include "planner/core/args.hpp"
#include "planner/core/parse.hpp"

namespace spplan::gui {

Result<GuiOptions> parseGuiOptions(int argc, const char* const* argv) {
  SPPLAN_ASSIGN_OR_RETURN(const Args args,
                          Args::parse(argc, argv, 1,
                                      {{"model"}, {"gpu"}, {"gpus"}, {"gpus-per-node"}, {"seq"}, {"screenshot"}, {"screenshots"}}));
  GuiOptions options;
  if (auto v = args.get("model")) options.model = *v;
  if (auto v = args.get("gpu")) options.gpu = *v;
  if (auto v = args.get("gpus")) options.gpus = *v;
  if (auto v = args.get("seq")) options.seq = *v;
  options.gpusPerNode = args.get("gpus-per-node");
  options.screenshotPath = args.get("screenshot");
  options.screenshotsDir = args.get("screenshots");
  for (const char* flag : {"model", "gpu", "gpus", "gpus-per-node", "seq"}) options.inputsGiven |= args.has(flag);

  // The same checks, in the same words, as `spplan plan`.
  SPPLAN_RETURN_IF_ERROR(load_model(options.model).status());
  SPPLAN_RETURN_IF_ERROR(load_gpu(options.gpu).status());
  SPPLAN_RETURN_IF_ERROR(parse_int("--gpus", options.gpus, 1, 1 << 24).status());
  if (options.gpusPerNode) {
    SPPLAN_RETURN_IF_ERROR(parse_int("--gpus-per-node", *options.gpusPerNode, 1, 1 << 16).status());
  }
  SPPLAN_RETURN_IF_ERROR(parse_seq_len("--seq", options.seq).status());
  if (options.screenshotPath && options.screenshotPath->empty()) {
    return Status::invalid("--screenshot: empty value (allowed: a path ending in .png)");
  }
  if (options.screenshotsDir && options.screenshotsDir->empty()) {
    return Status::invalid("--screenshots: empty value (allowed: a folder)");
  }
  return options;
}

}  // namespace spplan::gui
