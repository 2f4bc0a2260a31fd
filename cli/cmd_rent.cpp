// spplan rent --model M --seq S [--nodes LIST] [--price GPU=USD,...] [--tokens N] [knobs to fix]
// [--trainer T] [--attention A] [--json]
// "Which GPU is cheapest": every GPU preset at 1, 2 and 4 nodes (or --nodes), the best plan's
// $/Mtok, step time and tokens/s, and the longest sequence that fits, at the presets' list prices
// or the renter's own (--price); with --tokens, what training on that many tokens takes and costs.
// The cheapest and fastest marked.
// The same computation as the GUI's What-to-rent tab (search::rent_options).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/corpus_flags.hpp"
#include "cli/constraints.hpp"
#include "cli/report.hpp"
#include "planner/config/knob_flags.hpp"
#include "planner/config/loaders.hpp"
#include "planner/config/renter_settings.hpp"
#include "planner/config/stack_flags.hpp"
#include "planner/core/parse.hpp"
#include "planner/search/rent.hpp"

namespace spplan::cli {
namespace {

// Each node count is a plan search and a max-seq search on every preset: 128 nodes (1,024 GPUs of
// 8) keeps a table within seconds, and is past every published long-sequence run.
constexpr int64_t kMaxRentNodes = 128;
// And each count given is a row of every preset: 8 counts (1 to 128 nodes in powers of two) are
// a table one reads, and keep the worst case (8 counts at 128 nodes) within seconds.
constexpr size_t kMaxRentNodeCounts = 8;

}  // namespace

std::vector<FlagSpec> rent_flag_specs() {
  std::vector<FlagSpec> specs;
  for (FlagSpec f : cluster_flag_specs(true)) {  // the GPU and its count are what rent varies
    if (f.name == "model" || f.name == "seq" || f.name == "trainer" || f.name == "attention" || f.name == "headroom" ||
        f.name == "freeze-encoders" || f.name == "train-encoders") {
      specs.push_back(f);
    }
    // One price for every preset would price an L40S as an H100: parsed to point at --price.
    if (f.name == "price-per-gpu-hour" || f.name == "price-per-node-hour") {
      f.help = "refused: rent prices each GPU preset at its own price; --price PRESET=USD sets yours";
      f.allowed = "none";
      f.default_value = "each preset's list price";
      specs.push_back(f);
    }
  }
  for (FlagSpec f : search::searched_knob_flag_specs()) {
    if (f.name == "sp") {  // parsed to say why it is refused, rather than "unknown flag"
      f.help = "refused: the GPU count varies by option, so sp is searched with it";
      f.allowed = "none";
    }
    specs.push_back(f);
  }
  specs.push_back({"nodes", true, "the node counts of each GPU preset to price",
                   "at most " + std::to_string(kMaxRentNodeCounts) +
                       " node counts separated by commas, e.g. 1,2,4,8,16 (each 1-" + std::to_string(kMaxRentNodes) + ")",
                   "1,2,4"});
  specs.push_back({"price", true, "your own $ per GPU-hour for some presets, in place of their list price",
                   "PRESET=USD pairs separated by commas, one per preset, e.g. h100-80gb=2.1,h200-141gb=3.4",
                   "each preset's list price"});
  specs.push_back({"tokens", true, "a training budget in tokens: how long it runs and what it costs on each option",
                   "a number of tokens >= 1, e.g. 2e9", "not shown"});
  for (const FlagSpec& f : corpus_flag_specs()) specs.push_back(f);
  specs.push_back(json_flag_spec());
  return specs;
}

namespace {

// "1,2,4,8": distinct node counts in the order given.
Result<std::vector<int64_t>> parse_node_list(const std::string& text) {
  const size_t counts = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1;
  if (counts > kMaxRentNodeCounts) {  // counted before parsing: the value may be long, and is not quoted
    return Status::invalid("--nodes: " + std::to_string(counts) + " node counts given (allowed: at most " +
                           std::to_string(kMaxRentNodeCounts) + ", each 1-" + std::to_string(kMaxRentNodes) +
                           ", e.g. 1,2,4)");
  }
  std::vector<int64_t> nodes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    auto n = parse_int("--nodes", item, 1, kMaxRentNodes);
    if (!n.ok()) return n.status();
    if (std::find(nodes.begin(), nodes.end(), *n) == nodes.end()) nodes.push_back(*n);
  }
  if (nodes.empty() || text.back() == ',') {
    return Status::invalid("--nodes: value \"" + text + "\" is not a list (allowed: node counts separated by commas, e.g. 1,2,4)");
  }
  return nodes;
}

// "h100-80gb=2.1,h200-141gb=3.4": a price per GPU-hour for named presets.
Result<std::map<std::string, double>> parse_price_list(const std::string& text) {
  std::map<std::string, double> prices;
  const std::vector<std::string> presets = gpu_presets();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Status::invalid("--price: value \"" + item + "\" is not PRESET=USD (allowed: e.g. h100-80gb=2.1)");
    }
    const std::string name = item.substr(0, eq);
    if (std::find(presets.begin(), presets.end(), name) == presets.end()) {
      return Status::invalid("--price: GPU \"" + name + "\" is not a preset (allowed presets: " + join(presets) + ")");
    }
    // One price per preset bounds the list by the presets: a second is a typo, not a choice.
    if (prices.count(name) > 0) {
      return Status::invalid("--price: GPU \"" + name + "\" is priced twice (allowed: one price per preset)");
    }
    auto usd = parse_in("--price " + name, item.substr(eq + 1), kRenterRanges.price_per_hour);
    if (!usd.ok()) return usd.status();
    prices[name] = *usd;
  }
  if (prices.empty() || text.back() == ',') {
    return Status::invalid("--price: value \"" + text + "\" is not a list (allowed: PRESET=USD pairs separated by commas)");
  }
  return prices;
}

// What the budget columns price: `tokens` (--tokens), or `epochs` of the corpus (--lengths).
struct Budget {
  double tokens = 0;
  int64_t epochs = 0;
  bool asked() const { return tokens > 0 || epochs > 0; }
};

// The budget on the option's best plan: {"tokens", "seconds", "usd"} (tokens: the corpus's real
// tokens times the epochs).
nlohmann::json budget_json(const Budget& budget, const search::RentOption& o) {
  const costmodel::Estimate& e = o.best->estimate;
  const double epochs = static_cast<double>(budget.epochs);
  const double seconds = budget.tokens > 0 ? budget.tokens / e.tokens_per_s : epochs * e.epoch_s;
  const double tokens = budget.tokens > 0 ? budget.tokens : epochs * o.best->plan.documents.real_tokens();
  const double usd = seconds / 3600.0 * static_cast<double>(o.gpus) * o.best->plan.cluster.gpu.price_per_gpu_hour;
  return {{"tokens", tokens}, {"seconds", seconds}, {"usd", usd}};
}

// What the group column says, once under the table.
std::string rent_safety_words(const search::RentTable& table) {
  int safe = 0, risky = 0;
  for (const auto& o : table.options) {
    if (o.best) ++(search::is_safe(*o.best) ? safe : risky);
  }
  return "group: safe leaves more GPU memory free than the largest memory error measured for the trainer on that GPU (" +
         format_number("%.0f%%", search::kUnmeasuredHeadroomPct) + " where none was measured); " + std::to_string(safe) +
         " options safe, " + std::to_string(risky) + " risky only; cheapest and fastest are marked among the safe first";
}

}  // namespace

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
  const auto corpus = corpus_options(*args);
  if (!corpus.ok()) return fail(corpus.status());
  if (auto v = args->get("trainer")) {
    auto trainer = load_trainer(*v, "--trainer");
    if (!trainer.ok()) return fail(trainer.status());
    base.stack = *trainer;
  }
  if (const Status stack = apply_stack_flags(*args, &base.stack); !stack) return fail(stack);
  if (const Status headroom = apply_headroom_flag(*args, &base); !headroom) return fail(headroom);
  base.cluster.num_gpus = 1;  // read_constraints checks a fixed --sp against a count; rent varies it
  apply_corpus(*corpus, &base);  // the corpus packed at --seq: every option prices the same sequences
  if (args->has("sp")) {
    return fail(Status::invalid("--sp: not allowed with rent (the GPU count varies by option; allowed: the other knobs)"));
  }
  for (const char* flag : {"price-per-gpu-hour", "price-per-node-hour"}) {
    if (args->has(flag)) {
      return fail(Status::invalid("--" + std::string(flag) +
                                  ": not allowed with rent (it prices each GPU preset at its own price; allowed: --price "
                                  "PRESET=USD pairs, e.g. h100-80gb=2.1)"));
    }
  }
  const auto constraints = search::read_constraints(*args, &base, /*gpus_vary=*/true);
  if (!constraints.ok()) return fail(constraints.status());
  search::RentShapes shapes;
  shapes.accuracy = measured_accuracy();  // each preset's plans ranked against its own measured error
  if (auto v = args->get("nodes")) {
    auto nodes = parse_node_list(*v);
    if (!nodes.ok()) return fail(nodes.status());
    shapes.nodes = *nodes;
  }
  if (auto v = args->get("price")) {
    auto prices = parse_price_list(*v);
    if (!prices.ok()) return fail(prices.status());
    shapes.price_per_gpu_hour = *prices;
  }
  Budget budget;  // none asked unless --tokens or --lengths
  if (auto v = args->get("tokens")) {
    if (corpus->corpus) return fail(Status::invalid("--tokens: with --lengths the budget is the corpus's epochs (allowed: one of them)"));
    auto tokens = parse_double("--tokens", *v, 1.0);
    if (!tokens.ok()) return fail(tokens.status());
    budget.tokens = *tokens;
  }
  if (corpus->corpus) budget.epochs = corpus->epochs;
  const search::RentTable table = search::rent_options(base, *constraints, shapes);
  const std::string node_counts = join_ints(shapes.nodes);
  if (args->has("json")) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : table.options) {
      nlohmann::json j{{"gpu", o.gpu}, {"nodes", o.nodes}, {"gpus", o.gpus}, {"fits", o.best.has_value()},
                       {"max_seq", o.max_seq}};
      if (o.best) j["best"] = estimate_json(o.best->plan, o.best->estimate);
      if (o.best && budget.asked()) j["budget"] = budget_json(budget, o);
      options.push_back(j);
    }
    nlohmann::json j{{"options", options}};
    j["cheapest"] = table.cheapest >= 0 ? nlohmann::json(table.cheapest) : nlohmann::json(nullptr);
    j["fastest"] = table.fastest >= 0 ? nlohmann::json(table.fastest) : nlohmann::json(nullptr);
    j["ranking"] = constraints->ranking == search::Ranking::kSpeedOnly ? "speed_only" : "safe_first";
    j["safety"] = rent_safety_words(table);
    print_json(std::move(j));
    return table.cheapest >= 0 ? kExitOk : kExitNoFit;
  }
  std::printf("%s at %s tokens on each GPU preset (%s node%s):\n", base.model.name.c_str(),
              count_text(static_cast<double>(base.seq_len)).c_str(), node_counts.c_str(),
              shapes.nodes.size() == 1 && shapes.nodes[0] == 1 ? "" : "s");
  std::printf("%-12s %5s %5s %8s %9s %12s %12s %8s", "gpu", "nodes", "GPUs", "$/GPU-h", "$/Mtok", "step",
              "tokens/s", "max seq");
  if (budget.epochs > 0) {
    std::printf(" %12s %10s", budget.epochs == 1 ? "epoch" : (std::to_string(budget.epochs) + " epochs").c_str(), "$");
  } else if (budget.asked()) {
    std::printf(" %12s %10s", "budget time", "budget $");
  }
  std::printf(" %-5s  %s\n", "group", "best knobs");
  for (int i = 0; i < static_cast<int>(table.options.size()); ++i) {
    const auto& o = table.options[static_cast<size_t>(i)];
    const std::string mark = std::string(i == table.cheapest ? " cheapest" : "") + (i == table.fastest ? " fastest" : "");
    const std::string max_seq = o.max_seq > 0 ? seq_text(o.max_seq) : "none";
    if (o.best) {
      const auto& e = o.best->estimate;
      std::printf("%-12s %5lld %5lld %8.2f %9.3f %12s %12s %8s", o.gpu.c_str(), static_cast<long long>(o.nodes),
                  static_cast<long long>(o.gpus), o.best->plan.cluster.gpu.price_per_gpu_hour, e.usd_per_million_tokens,
                  duration_text(e.time.step_time_s).c_str(), count_text(e.tokens_per_s).c_str(), max_seq.c_str());
      if (budget.asked()) {
        const nlohmann::json b = budget_json(budget, o);
        std::printf(" %12s %10s", duration_text(b["seconds"].get<double>()).c_str(),
                    dollars_text(b["usd"].get<double>()).c_str());
      }
      std::printf(" %-5s  %s%s\n", search::group_name(*o.best), knobs_text(o.best->plan.knobs).c_str(), mark.c_str());
    } else {
      std::printf("%-12s %5lld %5lld %8s %9s %12s %12s %8s%s  does not fit\n", o.gpu.c_str(),
                  static_cast<long long>(o.nodes), static_cast<long long>(o.gpus), "-", "-", "-", "-", max_seq.c_str(),
                  budget.asked() ? "            -          -" : "");
    }
  }
  if (table.cheapest < 0) {
    std::cout << "nothing fits on any preset at " << node_counts
              << " nodes; --nodes prices more, and spplan fit names the GPU count that does\n";
    return kExitNoFit;
  }
  const auto& c = table.options[static_cast<size_t>(table.cheapest)];
  std::cout << "cheapest: " << c.gpu << " x " << c.gpus << " (" << c.nodes << " node" << (c.nodes > 1 ? "s" : "") << ")\n";
  std::cout << rent_safety_words(table) << "\n";
  return kExitOk;
}

}  // namespace spplan::cli
