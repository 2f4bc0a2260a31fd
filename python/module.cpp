// spplan._spplan: the `spplan` command inside Python. `run` calls the very function the `spplan`
// executable's main() calls (cli::run_command) with stdout and stderr captured, so the package
// and the command cannot disagree on a number or a message; `flags` is the command's flag table.
// The engine's commands (run, calibrate, validate engine) start processes and are not offered.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/utf8_text.hpp"
#include "planner/core/version.hpp"

namespace nb = nanobind;

namespace {

// Sends a std::ostream into a string for as long as it lives (the GIL keeps calls one at a time).
class Capture {
 public:
  Capture(std::ostream& stream, std::ostringstream& into) : stream_(stream), saved_(stream.rdbuf(into.rdbuf())) {}
  ~Capture() { stream_.rdbuf(saved_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

 private:
  std::ostream& stream_;
  std::streambuf* saved_;
};

const spplan::cli::Command& offered(const std::string& name) {
  const spplan::cli::Command* command = spplan::cli::find_command(name);
  if (command == nullptr || command->engine || name == "validate") {
    throw nb::value_error(("command \"" + name + "\" is not offered in Python").c_str());
  }
  return *command;
}

// (exit code, stdout, stderr) of `spplan COMMAND ARGS...`. The arguments come as bytes
// (os.fsencode): a path named in Latin-1 is a str with surrogates in Python, which has no UTF-8
// form for a std::string. What comes back is made UTF-8 (utf8_text, \xNN for a byte that is not):
// a message quoting such a path, or the text of a model named after it, would otherwise raise
// UnicodeDecodeError in place of the command's answer.
std::tuple<int, std::string, std::string> run(const std::string& command, const std::vector<nb::bytes>& args) {
  offered(command);
  std::vector<std::string> arg_texts;
  for (const nb::bytes& a : args) arg_texts.emplace_back(a.c_str(), a.size());
  std::vector<const char*> argv{"spplan", command.c_str()};
  for (const std::string& a : arg_texts) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int exit_code = 0;
  {
    Capture capture_out(std::cout, out), capture_err(std::cerr, err);
    exit_code = spplan::cli::run_command(static_cast<int>(argv.size()), argv.data());
  }
  return {exit_code, spplan::utf8_text(out.str()), spplan::utf8_text(err.str())};
}

nb::list flags(const std::string& command) {
  nb::list list;
  for (const spplan::FlagSpec& f : offered(command).flags) {
    nb::dict d;
    d["name"] = f.name;
    d["takes_value"] = f.takes_value;
    d["help"] = f.help;
    d["allowed"] = f.allowed;
    d["default"] = f.default_value;
    d["opposite"] = f.opposite;
    list.append(d);
  }
  return list;
}

std::vector<std::string> commands() {
  std::vector<std::string> names;
  for (const spplan::cli::Command& c : spplan::cli::commands()) {
    if (!c.engine && c.name != "validate") names.push_back(c.name);
  }
  return names;
}

}  // namespace

NB_MODULE(_spplan, m) {
  m.def("run", &run, nb::arg("command"), nb::arg("args"));
  m.def("flags", &flags, nb::arg("command"));
  m.def("help", [](const std::string& command) { return spplan::cli::command_help(offered(command)); });
  m.def("commands", &commands);
  m.def("version", [] { return std::string(spplan::version()); });
  m.def("commit", [] { return std::string(spplan::commit()); });
  m.def("set_configs_dir", &spplan::set_configs_dir, nb::arg("dir"));
  m.def("model_presets", &spplan::model_presets);
  m.def("gpu_presets", &spplan::gpu_presets);
  m.def("trainer_presets", &spplan::trainer_presets);
}
