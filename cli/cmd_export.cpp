// spplan export --plan FILE.toml --format FORMAT [--out FILE]: FORMAT one of the plan's trainer's
#include <filesystem>
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/output_file.hpp"
#include "planner/core/parse.hpp"
#include "planner/costmodel/estimate.hpp"
#include "planner/export/export.hpp"

namespace spplan::cli {

std::vector<FlagSpec> export_flag_specs() {
  return {{"plan", true, "the plan to export", "a plan TOML file, e.g. from spplan plan --out", "required"},
          {"format", true, "the stack that reads the export", join(export_format_names()), "required"},
          {"out", true, "write the export to this file instead of stdout", "a path (not the plan file)", "stdout"}};
}

int cmd_export(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, export_flag_specs());
  if (!args.ok()) return fail(args.status());
  auto format_name = args->require("format", "deepspeed, accelerate, arctic or torchrun");
  if (!format_name.ok()) return fail(format_name.status());
  auto format = parse_export_format(*format_name, "--format");
  if (!format.ok()) return fail(format.status());
  auto path = args->require("plan", "a plan TOML file, e.g. from `spplan plan --out FILE.toml`");
  if (!path.ok()) return fail(path.status());
  auto plan = load_plan(*path);
  if (!plan.ok()) return fail(plan.status());
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(*path, ec);  // the script may run elsewhere
  auto text = export_plan(*plan, *format, ec ? *path : absolute.lexically_normal().string());
  if (!text.ok()) return fail(text.status().with_context(*path));
  if (const auto e = costmodel::estimate(*plan); !e.fits) {
    warn(*path + ": the plan does not fit (" + e.reason() + "); the export is written as asked and will run out of memory");
  }
  const Knobs& k = plan->knobs;
  if (*format == ExportFormat::kDeepSpeed &&
      (k.offload_optimizer == OffloadDevice::kNvme || k.offload_params == OffloadDevice::kNvme)) {
    warn("nvme_path \"/local_nvme\" in the export is a placeholder: put a local NVMe mount of every node");
  }
  if (*format == ExportFormat::kDeepSpeed && plan->optimizer.train_steps == 0 &&
      plan->optimizer.lr_schedule != LrSchedule::kConstant) {
    warn(*path + ": scheduler total_num_steps is \"auto\", which only the Hugging Face Trainer fills; for plain "
         "deepspeed give the plan a length (spplan plan ... --train-steps K)");
  }
  if (auto out = args->get("out")) {
    if (Status s = check_not_an_input("--out", *out, plan_input_files(*path, *plan)); !s) return fail(s);
    if (Status s = write_file_atomically(*out, *text); !s) return fail(s);
  } else {
    std::cout << *text;
  }
  return kExitOk;
}

}  // namespace spplan::cli
