// The help is generated from the flag tables the commands parse with: every flag of every command
// has its meaning, and a value flag its allowed values and default; `--help` lists them all.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command_table.hpp"
#include "cli/completion.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/stack_flags.hpp"
#include "run_spplan.hpp"

namespace spplan::cli {
namespace {

using cli_test::CliRun;
using cli_test::run_spplan;

TEST(Help, EveryFlagOfEveryCommandHasHelpText) {
  size_t flags = 0;
  for (const Command& c : commands()) {
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_FALSE(c.exit_codes.empty()) << c.name;
    for (const FlagSpec& f : c.flags) {
      ++flags;
      EXPECT_FALSE(f.help.empty()) << c.name << " --" << f.name << ": no help text";
      if (!f.takes_value) continue;
      EXPECT_FALSE(f.allowed.empty()) << c.name << " --" << f.name << ": no allowed values";
      EXPECT_FALSE(f.default_value.empty()) << c.name << " --" << f.name << ": no default";
    }
  }
  EXPECT_GT(flags, 60u);  // the table is the commands' own: estimate alone has 22
}

TEST(Help, CommandHelpListsEveryFlagTheParserTakes) {
  for (const Command& c : commands()) {
    if (c.engine) continue;
    const CliRun r = run_spplan(c.name + " --help");
    EXPECT_EQ(r.exit_code, 0) << c.name << ": " << r.err;
    EXPECT_EQ(r.out.rfind("usage: spplan " + c.name + " ", 0), 0u) << r.out;
    for (const FlagSpec& f : c.flags) {
      EXPECT_NE(r.out.find("  --" + f.name + (f.takes_value ? " V" : "")), std::string::npos) << c.name << " --" << f.name;
      EXPECT_NE(r.out.find(f.help), std::string::npos) << c.name << " --" << f.name;
    }
    EXPECT_EQ(run_spplan("help " + c.name).out, r.out) << c.name;
  }
}

TEST(Help, ShowsUnitsAllowedValuesDefaultsAndPresets) {
  const CliRun r = run_spplan("plan --help");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* text : {"--reduce-bucket V", "in elements", "V: none, cpu, nvme",
                           "default: searched (the flag fixes it)", "--top V", "default: 5",
                           "model presets: ", "qwen3-4b", "GPU presets: ", "h100-80gb", "exit codes: 0 some plan fits"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  const CliRun e = run_spplan("estimate -h");
  EXPECT_NE(e.out.find("V: 0, 1, 2, 3; default: 3"), std::string::npos) << e.out;
}

// The program's summary says every value a knob or stack flag takes, from the flag tables the
// parser reads (it listed --attention flash2|sdpa when flash3 and flex were taken too).
TEST(Help, ProgramSummaryNamesEveryValueTheParserTakes) {
  const CliRun r = run_spplan("--help");
  ASSERT_EQ(r.exit_code, 0);
  std::vector<FlagSpec> specs = knob_flag_specs();
  for (const FlagSpec& f : stack_flag_specs()) specs.push_back(f);
  int choices = 0;
  for (const FlagSpec& f : specs) {
    std::string values = f.allowed;
    for (size_t at = values.find(", "); at != std::string::npos; at = values.find(", ", at)) values.replace(at, 2, "|");
    if (!f.takes_value || values.find(' ') != std::string::npos) continue;  // "a number >= 1, e.g. 5e8"
    ++choices;
    EXPECT_NE(r.out.find("--" + f.name + " " + values), std::string::npos) << f.name << "\n" << r.out;
  }
  EXPECT_EQ(choices, 8);  // cp-comm, zero, the two offloads, act-ckpt, sp-comm-dtype, precision, attention
  EXPECT_NE(r.out.find("--attention flash2|sdpa|flash3|flex"), std::string::npos) << r.out;
}

TEST(Help, HelpIsAskedAnywhereAndBadInputStaysOneLine) {
  EXPECT_EQ(run_spplan("estimate --model qwen3-4b --help").exit_code, 0);
  const struct {
    const char* args;
    const char* expected;
  } cases[] = {
      {"help nonsense", "spplan: command \"nonsense\" is not known (allowed: "},
      {"nonsense --help", "spplan: command \"nonsense\" is not known (allowed: "},
  };
  for (const auto& c : cases) {
    const CliRun r = run_spplan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.rfind(c.expected, 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

TEST(Version, PrintsVersionAndCommit) {
  const CliRun r = run_spplan("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("spplan 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
}

TEST(Completion, OffersCommandsFlagsAndValueWords) {
  EXPECT_EQ(allowed_words("none, cpu, nvme"), (std::vector<std::string>{"none", "cpu", "nvme"}));
  EXPECT_TRUE(allowed_words("an integer >= 1").empty());
  EXPECT_TRUE(allowed_words("a plan TOML file, e.g. from spplan plan --out").empty());
  const std::string script = bash_completion(commands(), {}, {"qwen3-4b"}, {"h100-80gb"});
  for (const char* text : {"complete -F _spplan spplan", "_spplan_max_seq()", "--offload-optimizer) _spplan_words \"none cpu nvme\"",
                           "--model) _spplan_words \"$_spplan_models\"; _spplan_files", "_spplan_models=\"qwen3-4b\"",
                           "--out) _spplan_files", "--trainer) _spplan_files", "--seq) :; return ;;",
                           "--gpus) :; return ;;", "--headroom) :; return ;;"}) {
    EXPECT_NE(script.find(text), std::string::npos) << text;
  }
  // calibrate's --from-run flags are offered beside the engine's calibrate flags, engine or not.
  const size_t calibrate = script.find("_spplan_calibrate()");
  ASSERT_NE(calibrate, std::string::npos);
  EXPECT_NE(script.find("--from-run", calibrate), std::string::npos);
  EXPECT_LT(script.find("--from-run", calibrate), script.find("\n}\n", calibrate));
  // Numeric flags offer no file names.
  EXPECT_EQ(script.find("--seq) _spplan_files"), std::string::npos);
  EXPECT_EQ(script.find("--lr) _spplan_files"), std::string::npos);
}

}  // namespace
}  // namespace spplan::cli
