#include "planner/core/args.hpp"

#include <algorithm>

#include "planner/core/parse.hpp"
#include "planner/core/suggest.hpp"

namespace spplan {
namespace {

bool is_flag(std::string_view token) { return token.rfind("--", 0) == 0; }

// What other tools call these flags, which edit distance cannot find: DeepSpeed's and
// ArcticTraining's sequence_parallel_size, yunchang's ulysses_degree and ring_degree, Megatron's
// --context-parallel-size, the HF Trainer's gradient_accumulation_steps. The flag suggested, when
// the command has it; "" otherwise.
std::string alias_of(const std::string& name, const std::vector<FlagSpec>& specs) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"sp-size", "sp"},          {"sequence-parallel-size", "sp"}, {"ulysses-degree", "sp"}, {"ulysses-size", "sp"},
      {"cp-size", "cp"},          {"context-parallel-size", "cp"},  {"ring-degree", "cp"},    {"ring-size", "cp"},
      {"zero-stage", "zero"},     {"num-gpus", "gpus"},             {"seq-len", "seq"},       {"sequence-length", "seq"},
      {"max-length", "seq"},      {"micro-batch-size", "micro-batch"}, {"global-batch-size", "global-batch"},
      {"gradient-accumulation-steps", "grad-accum"}};
  std::string key = name;
  std::replace(key.begin(), key.end(), '_', '-');
  for (const auto& [alias, flag] : kAliases) {
    if (key != alias) continue;
    for (const FlagSpec& s : specs) {
      if (s.name == flag) return flag;
    }
  }
  return "";
}

}  // namespace

Result<Args> Args::parse(const std::vector<std::string>& words, const std::vector<FlagSpec>& specs) {
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  return parse(static_cast<int>(argv.size()), argv.data(), 0, specs);
}

Result<Args> Args::parse(int argc, const char* const* argv, int first, const std::vector<FlagSpec>& specs) {
  Args args;
  std::vector<std::string> allowed;
  for (const auto& s : specs) allowed.push_back("--" + s.name);
  for (int i = first; i < argc; ++i) {
    std::string token = argv[i];
    if (!is_flag(token)) {
      args.positional_.push_back(token);
      continue;
    }
    std::string name = token.substr(2);
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      const std::string alias = alias_of(name, specs);
      return Status::invalid("--" + name + ": unknown flag" +
                             (alias.empty() ? did_you_mean("--" + name, allowed, "", "") : "; did you mean --" + alias + "?") +
                             " (allowed: " + join(allowed) + ")");
    }
    if (args.values_.count(name)) return Status::invalid("--" + name + ": given twice (allowed: once)");
    if (!spec->takes_value) {
      if (inline_value) return Status::invalid("--" + name + ": takes no value, found \"" + *inline_value + "\"");
      args.values_[name] = "true";
      continue;
    }
    if (inline_value) {
      args.values_[name] = *inline_value;
    } else if (i + 1 < argc && !is_flag(argv[i + 1])) {
      args.values_[name] = argv[++i];
    } else if (i + 1 < argc) {
      // `--out --json` would otherwise write a file named "--json"; --name=VALUE still takes any value.
      return Status::invalid("--" + name + ": missing value, found the flag \"" + argv[i + 1] + "\" (allowed: --" +
                             name + " VALUE or --" + name + "=VALUE)");
    } else {
      return Status::invalid("--" + name + ": missing value");
    }
  }
  for (const FlagSpec& s : specs) {
    if (!s.opposite.empty() && args.has(s.name) && args.has(s.opposite)) {
      return Status::invalid("--" + s.opposite + ": not allowed with --" + s.name + " (allowed: one of them)");
    }
  }
  return args;
}

std::string flags_help(const std::vector<FlagSpec>& specs) {
  constexpr size_t kHelpColumn = 26;  // where the meaning starts: room for "--offload-optimizer V"
  std::string text;
  for (const FlagSpec& s : specs) {
    std::string head = "  --" + s.name;
    if (s.takes_value) head += " V";
    text += head + std::string(head.size() < kHelpColumn ? kHelpColumn - head.size() : 1, ' ') + s.help + "\n";
    std::string details;
    if (!s.allowed.empty()) details = "V: " + s.allowed;
    if (!s.default_value.empty()) details += (details.empty() ? "" : "; ") + std::string("default: ") + s.default_value;
    if (!details.empty()) text += std::string(kHelpColumn, ' ') + details + "\n";
  }
  return text;
}

std::optional<std::string> Args::get(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<std::string> Args::require(const std::string& name, const std::string& what_allowed) const {
  const auto value = get(name);
  if (!value) return Status::invalid("--" + name + ": missing (required: " + what_allowed + ")");
  return *value;
}

Result<Args> parse_flags_only(int argc, const char* const* argv, int first, const std::vector<FlagSpec>& specs,
                              const std::string& command, const std::string& help) {
  auto args = Args::parse(argc, argv, first, specs);
  if (!args.ok()) return Status::invalid(command + ": " + args.status().message());
  for (const FlagSpec& spec : specs) {
    if (auto v = args->get(spec.name); spec.takes_value && v && v->empty()) {
      return Status::invalid(command + ": --" + spec.name + ": empty value (allowed: " + spec.allowed + ")");
    }
  }
  if (!args->positional().empty()) {
    return Status::invalid(command + ": argument \"" + args->positional().front() + "\" is not known (allowed: the flags of " +
                           help + ")");
  }
  return args;
}

}  // namespace spplan
