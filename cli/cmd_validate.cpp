// spplan validate published FILE.csv [--json]   predictions against publications (exit 1 on a miss)
// spplan validate engine [--json] [--quick | --long | --ring | --moe | --window | --packed] [--calibration FILE] [--gpu G]   against the engine's runs (spplan-engine)
#include <iostream>
#include <string>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "cli/validate_published.hpp"

namespace spplan::cli {

std::vector<FlagSpec> validate_flag_specs() { return {json_flag_spec()}; }

int cmd_validate(int argc, const char* const* argv) {
  // The engine validation takes the engine's own flags (--quick, --calibration): hand it all.
  if (argc > 1 && std::string(argv[1]) == "engine") return cmd_forward_to_engine(argc + 1, argv - 1);
  auto args = Args::parse(argc, argv, 1, validate_flag_specs());
  if (!args.ok()) return fail(args.status());
  const auto& pos = args->positional();
  if (pos.size() != 2 || pos[0] != "published") {
    return fail(Status::invalid("validate: expected \"published FILE.csv\" or \"engine\" (allowed: published, engine)"));
  }
  auto report = validate_published(pos[1]);
  if (!report.ok()) return fail(report.status());
  if (args->has("json")) {
    print_json(nlohmann::json{{"rows", report->rows}, {"summary", report->summary}});
  } else {
    std::cout << report->table;
  }
  return report->misses == 0 ? kExitOk : 1;
}

}  // namespace spplan::cli
