// spplan rent --model M --seq S [knobs to fix] [--trainer T] [--attention A] [--json]
// "Which GPU is cheapest": every GPU preset at 1, 2 and 4 nodes, the best plan's $/Mtok, step
// time and tokens/s, and the longest sequence that fits; the cheapest and fastest marked.
// The same computation as the GUI's What-to-rent tab (search::rent_options).
#include <cstdio>
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/constraints.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/rent.hpp"

namespace spplan::cli {

std::vector<FlagSpec> rent_flag_specs() {
  std::vector<FlagSpec> specs;
  for (const FlagSpec& f : cluster_flag_specs(true)) {  // the GPU and its count are what rent varies
    if (f.name == "model" || f.name == "seq" || f.name == "trainer" || f.name == "attention" || f.name == "headroom") {
      specs.push_back(f);
    }
  }
  for (FlagSpec f : searched_knob_flag_specs()) {
    if (f.name == "sp") {  // parsed to say why it is refused, rather than "unknown flag"
      f.help = "refused: the GPU count varies by option, so sp is searched with it";
      f.allowed = "none";
    }
    specs.push_back(f);
  }
  specs.push_back(json_flag_spec());
  return specs;
}

int cmd_rent(int argc, const char* const* argv) {
  auto args = parse_flags(argc, argv, rent_flag_specs());
  if (!args.ok()) return fail(args.status());
  PlanSpec base;
  auto model = args->require("model", "a model preset or file");
  if (!model.ok()) return fail(model.status());
  auto loaded = load_model(*model);
  if (!loaded.ok()) return fail(loaded.status());
  base.model = *loaded;
  auto seq = args->require("seq", "a sequence length such as 128k");
  if (!seq.ok()) return fail(seq.status());
  auto seq_len = parse_seq_len("--seq", *seq);
  if (!seq_len.ok()) return fail(seq_len.status());
  base.seq_len = *seq_len;
  if (auto v = args->get("trainer")) {
    auto trainer = load_trainer(*v, "--trainer");
    if (!trainer.ok()) return fail(trainer.status());
    base.stack = *trainer;
  }
  if (auto v = args->get("attention")) {
    auto kernel = parse_choice("--attention", *v, attention_kernel_names());
    if (!kernel.ok()) return fail(kernel.status());
    base.stack.attention = static_cast<AttentionKernel>(*kernel);
  }
  if (const Status headroom = apply_headroom_flag(*args, &base); !headroom) return fail(headroom);
  base.cluster.num_gpus = 1;  // read_constraints checks a fixed --sp against a count; rent varies it
  if (args->has("sp")) {
    return fail(Status::invalid("--sp: not allowed with rent (the GPU count varies by option; allowed: the other knobs)"));
  }
  const auto constraints = read_constraints(*args, &base);
  if (!constraints.ok()) return fail(constraints.status());
  const search::RentTable table = search::rent_options(base, *constraints);
  if (args->has("json")) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : table.options) {
      nlohmann::json j{{"gpu", o.gpu}, {"nodes", o.nodes}, {"gpus", o.gpus}, {"fits", o.best.has_value()},
                       {"max_seq", o.max_seq}};
      if (o.best) j["best"] = estimate_json(o.best->plan, o.best->estimate);
      options.push_back(j);
    }
    nlohmann::json j{{"options", options}};
    j["cheapest"] = table.cheapest >= 0 ? nlohmann::json(table.cheapest) : nlohmann::json(nullptr);
    j["fastest"] = table.fastest >= 0 ? nlohmann::json(table.fastest) : nlohmann::json(nullptr);
    std::cout << j.dump(2) << "\n";
    return table.cheapest >= 0 ? kExitOk : kExitNoFit;
  }
  std::printf("%s at %lld tokens on each GPU preset (1, 2, 4 nodes):\n", base.model.name.c_str(),
              static_cast<long long>(base.seq_len));
  std::printf("%-12s %5s %5s %9s %9s %12s %10s  %s\n", "gpu", "nodes", "GPUs", "$/Mtok", "step s", "tokens/s",
              "max seq", "best knobs");
  for (int i = 0; i < static_cast<int>(table.options.size()); ++i) {
    const auto& o = table.options[static_cast<size_t>(i)];
    const std::string mark = std::string(i == table.cheapest ? " cheapest" : "") + (i == table.fastest ? " fastest" : "");
    const std::string max_seq = o.max_seq > 0 ? std::to_string(o.max_seq / 1024) + "k" : "none";
    if (o.best) {
      const auto& e = o.best->estimate;
      std::printf("%-12s %5lld %5lld %9.3f %9.3f %12.0f %10s  %s%s\n", o.gpu.c_str(), static_cast<long long>(o.nodes),
                  static_cast<long long>(o.gpus), e.usd_per_million_tokens, e.time.step_time_s, e.tokens_per_s,
                  max_seq.c_str(), knobs_text(o.best->plan.knobs).c_str(), mark.c_str());
    } else {
      std::printf("%-12s %5lld %5lld %9s %9s %12s %10s  does not fit\n", o.gpu.c_str(), static_cast<long long>(o.nodes),
                  static_cast<long long>(o.gpus), "-", "-", "-", max_seq.c_str());
    }
  }
  if (table.cheapest < 0) {
    std::cout << "nothing fits on any preset at 4 nodes or fewer; spplan fit names the GPU count that does\n";
    return kExitNoFit;
  }
  const auto& c = table.options[static_cast<size_t>(table.cheapest)];
  std::cout << "cheapest: " << c.gpu << " x " << c.gpus << " (" << c.nodes << " node" << (c.nodes > 1 ? "s" : "") << ")\n";
  return kExitOk;
}

}  // namespace spplan::cli
