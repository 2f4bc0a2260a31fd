// spplan_completion: prints the bash completion of `spplan` (cli/completion.hpp); run at build
// time to write build/completion/spplan, which `cmake --install` installs.
#include <iostream>

#include "cli/completion.hpp"
#include "planner/config/loaders.hpp"

#ifdef SPPLAN_COMPLETION_HAS_ENGINE
#include "engine/measure/calibrate_flags.hpp"
#include "engine/measure/validate.hpp"
#include "engine/run/options.hpp"
#endif

int main() {
  std::map<std::string, std::vector<spplan::FlagSpec>> engine_flags;
#ifdef SPPLAN_COMPLETION_HAS_ENGINE
  engine_flags["run"] = spplan::engine::run_flag_specs();
  engine_flags["calibrate"] = spplan::engine::calibrate_flag_specs();
  engine_flags["validate"] = spplan::engine::validate_flag_specs();  // validate engine's; published takes --json
#endif
  std::cout << spplan::cli::bash_completion(spplan::cli::commands(), engine_flags, spplan::model_presets(),
                                            spplan::gpu_presets());
  return 0;
}
