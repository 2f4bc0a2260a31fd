// The fuzzed entry points, one per input format spplan reads. Each takes arbitrary bytes and must
// return normally whatever they hold: no crash, hang, leak or undefined behaviour (the sanitizer
// build checks the last two), and an error is one line (checked here: a broken rule aborts, which
// the fuzzer reports as a crash). Shared by the libFuzzer drivers (fuzz_driver.cpp, clang only) and
// tests/fuzz, which replays the seeds and every input that once failed (fuzz/regressions/NAME/) in
// the normal build.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spplan::fuzz {

using Body = void (*)(std::string_view bytes);

struct Target {
  std::string name;                    // fuzz_NAME is the driver; fuzz/regressions/NAME/ its crashers
  Body body;
  std::vector<std::string> seed_dirs;  // relative to the source tree: real files of this format
  std::string seed_ending;             // only files ending so (".toml"); empty: every file
};

const std::vector<Target>& targets();
const Target* find_target(std::string_view name);

void model_toml(std::string_view bytes);      // load_model on a .toml file
void gpu_toml(std::string_view bytes);        // load_gpu on a .toml file
void plan_toml(std::string_view bytes);       // load_plan
void trainer_toml(std::string_view bytes);    // load_trainer on a record file (configs/trainers)
void config_json(std::string_view bytes);     // load_model on a Hugging Face config.json
void validation_csv(std::string_view bytes);  // validate_published
void seq_len(std::string_view bytes);         // parse_seq_len, parse_int, parse_double
void cli_args(std::string_view bytes);        // the spplan front end; one argument per line
void run_log(std::string_view bytes);         // spplan check: a run log of any format, then held against a plan
void lengths_file(std::string_view bytes);    // a lengths file (CSV or JSON), then packed every way

}  // namespace spplan::fuzz
