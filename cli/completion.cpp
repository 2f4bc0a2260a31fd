#include "cli/completion.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "planner/core/parse.hpp"

namespace spplan::cli {
namespace {

// A bash function name for a command: "max-seq" -> "max_seq".
std::string identifier(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

// A flag whose value may be a path: its allowed forms name a file, a folder or a path.
bool takes_path(const FlagSpec& f) {
  for (const char* word : {"file", "folder", "path", "directory"}) {
    if (f.allowed.find(word) != std::string::npos) return true;
  }
  return false;
}

// `case` arms: one per flag whose value has a few words, presets, or a file; a number gets nothing
// (file names would be wrong there).
std::string value_arms(const std::vector<FlagSpec>& flags) {
  std::string arms;
  for (const FlagSpec& f : flags) {
    if (!f.takes_value) continue;
    const std::vector<std::string> words = allowed_words(f.allowed);
    std::string reply;
    if (f.name == "model") {
      reply = "_spplan_words \"$_spplan_models\"; _spplan_files";
    } else if (f.name == "gpu") {
      reply = "_spplan_words \"$_spplan_gpus\"; _spplan_files";
    } else if (!words.empty()) {
      reply = "_spplan_words \"" + join(words, " ") + "\"";
    } else if (takes_path(f)) {
      reply = "_spplan_files";
    } else {
      reply = ":";  // a number or a list: nothing to offer
    }
    arms += "      --" + f.name + ") " + reply + "; return ;;\n";
  }
  return arms;
}

std::string command_function(const std::string& name, const std::vector<FlagSpec>& flags) {
  std::vector<std::string> names;
  for (const FlagSpec& f : flags) names.push_back("--" + f.name);
  names.push_back("--help");
  return "_spplan_" + identifier(name) + "() {\n    case \"$prev\" in\n" + value_arms(flags) +
         "    esac\n    _spplan_words \"" + join(names, " ") + "\"\n}\n";
}

}  // namespace

std::vector<std::string> allowed_words(const std::string& allowed) {
  static const std::regex kWordList("[A-Za-z0-9_.]+(, [A-Za-z0-9_.]+)+");
  if (!std::regex_match(allowed, kWordList)) return {};
  return split(allowed, ", ");
}

std::string bash_completion(const std::vector<Command>& commands,
                            const std::map<std::string, std::vector<FlagSpec>>& extra_flags,
                            const std::vector<std::string>& model_presets,
                            const std::vector<std::string>& gpu_presets) {
  std::string script =
      "# bash completion for spplan: generated from its flag tables (cli/completion.cpp); do not edit.\n"
      "_spplan_models=\"" + join(model_presets, " ") + "\"\n"
      "_spplan_gpus=\"" + join(gpu_presets, " ") + "\"\n"
      "_spplan_words() { COMPREPLY+=($(compgen -W \"$1\" -- \"$cur\")); }\n"
      "_spplan_files() { COMPREPLY+=($(compgen -f -- \"$cur\")); }\n";
  std::vector<std::string> names;
  std::string dispatch;
  for (const Command& c : commands) {
    names.push_back(c.name);
    const auto extra = extra_flags.find(c.name);
    std::vector<FlagSpec> flags = extra != extra_flags.end() ? extra->second : c.flags;
    // calibrate --from-run keeps a checked run with flags of its own (cmd_check.cpp), in every build.
    if (c.name == "calibrate") {
      for (const FlagSpec& f : calibrate_from_run_flag_specs()) {
        const auto same = [&](const FlagSpec& g) { return g.name == f.name; };
        if (std::none_of(flags.begin(), flags.end(), same)) flags.push_back(f);
      }
    }
    script += command_function(c.name, flags);
    dispatch += "    " + c.name + ") _spplan_" + identifier(c.name) + " ;;\n";
  }
  script += "_spplan() {\n"
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
            "    COMPREPLY=()\n"
            "    if [ \"$COMP_CWORD\" -eq 1 ]; then _spplan_words \"" + join(names, " ") +
            " help --help --version\"; return; fi\n"
            "    if [ \"${COMP_WORDS[1]}\" = help ]; then\n"
            "        [ \"$COMP_CWORD\" -eq 2 ] && _spplan_words \"" + join(names, " ") + "\"\n"
            "        return\n"
            "    fi\n"
            "    if [ \"${COMP_WORDS[1]}\" = validate ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
            "        _spplan_words \"published engine\"; return\n"
            "    fi\n"
            "    case \"${COMP_WORDS[1]}\" in\n" + dispatch +
            "    esac\n"
            "}\n"
            "complete -F _spplan spplan\n";
  return script;
}

}  // namespace spplan::cli
