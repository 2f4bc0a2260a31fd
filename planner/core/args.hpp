// Args: the command-line flags of one subcommand, checked against the flags it accepts.
// `--name value` and `--name=value`; boolean flags take no value. Unknown flags, missing values
// and repeated flags are errors naming the flag and the allowed ones.
//
// A FlagSpec is also the flag's manual: `spplan COMMAND --help`, the bash completion and the
// Python package's docstrings are generated from the same table the parser reads, so they cannot
// disagree. The help fields default to empty, so `{"name"}` and `{"name", false}` still compile;
// tests/cli/test_help.cpp fails until every flag of every command has them.
//
// Why not CLI11 (Debian's libcli11-dev 2.1): its errors are its own two lines ("The following
// arguments were not expected: --x" + "Run with --help for more information.", exit 109 and
// others), so keeping spplan's contract (one line naming the flag, the value and what is allowed,
// exit 2) means catching every ParseError kind and rewriting it; the GPU node's engine-only build
// would need it bundled (scripts/bundle-headers.sh); and it costs 4.3 s per including file
// (BUILD-NOTES.md section 6) against this 60-line, fuzzed parser whose table already drives the
// help, the completion and the Python package.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan {

struct FlagSpec {
  std::string name;      // without dashes: "seq", "tiled-mlp"
  bool takes_value = true;
  std::string help = {};           // what it means, with its unit: "sequence length in tokens"
  std::string allowed = {};        // the values it takes: "0|1|2|3", "an integer 1..1000"; "" for a switch
  std::string default_value = {};  // what holds without it: "5", "searched", "required"; "" for a switch (off)
  // A switch's opposite, the switch that undoes it ("no-tiled-mlp" for "tiled-mlp", "train-encoders"
  // for "freeze-encoders"): the two together are refused, and the Python package passes it for False.
  std::string opposite = {};
};

// The flags as `--help` lists them: one block per flag, its value's allowed forms and default.
//   --seq S        sequence length in tokens
//                  allowed: 131072, 1.5e7 (decimal), 128k or 1.5M (k = 1024, M = 1024^2); default: required
std::string flags_help(const std::vector<FlagSpec>& specs);

class Args {
 public:
  // Parses argv[first..argc). Positional arguments (not starting with "--") are kept in order.
  static Result<Args> parse(int argc, const char* const* argv, int first, const std::vector<FlagSpec>& specs);
  // The same for flags built in code rather than typed ({"--sp", "4", "--no-tiled-mlp"}): the GUI's
  // fields and pins read as the CLI reads their flags.
  static Result<Args> parse(const std::vector<std::string>& words, const std::vector<FlagSpec>& specs);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> get(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // Error "--name: missing (required ...)" when absent.
  Result<std::string> require(const std::string& name, const std::string& what_allowed) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// Args::parse for a command that takes flags only: every message starts with `command`
// ("spplan-engine calibrate: "), an empty value is refused (an empty path would silently mean
// none), and so is any positional argument (its message points at `help`, the command's --help).
Result<Args> parse_flags_only(int argc, const char* const* argv, int first, const std::vector<FlagSpec>& specs,
                              const std::string& command, const std::string& help);

}  // namespace spplan
