// spplan check --plan P.toml RUNLOG... [--runs FILE[,FILE]] [--json]: a run's logs against its plan.
// spplan calibrate --from-run --plan P.toml RUNLOG... --out GPU.toml: that run kept as a measured row
// in GPU.runs.json beside the user's GPU file, which later checks read with --runs.
#include <cstdio>
#include <iostream>

#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "planner/check/run_log.hpp"
#include "planner/check/user_runs.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/units.hpp"

namespace spplan::cli {
namespace {

constexpr int kExitNotThePlan = 1;

FlagSpec plan_flag() { return {"plan", true, "the plan the run was launched from", "a plan TOML file", "required"}; }
FlagSpec runs_flag() {
  return {"runs", true, "your own runs (calibrate --from-run wrote them), counted in the measured band; SPPLAN_RUNS "
                        "(files separated by \":\") adds them to every command's verdicts",
          "runs files (.runs.json), separated by commas", "SPPLAN_RUNS's, else the shipped validation runs only"};
}

struct CheckedRun {
  std::string plan_path;
  PlanSpec plan;
  std::vector<std::string> logs;
  check::RunMeasurements run;
  check::Band band;
  check::CheckReport report;
};

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  for (size_t begin = 0; begin <= text.size();) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

// The plan, its logs read and merged, the band, the report.
Result<CheckedRun> checked_run(const Args& args, const std::vector<std::string>& runs_files) {
  CheckedRun c;
  SPPLAN_ASSIGN_OR_RETURN(c.plan_path, args.require("plan", "a plan TOML file, the one the run was launched from"));
  SPPLAN_ASSIGN_OR_RETURN(c.plan, load_plan(c.plan_path));
  c.logs = args.positional();
  if (c.logs.empty()) {
    return Status::invalid("RUNLOG: missing (required: one or more logs of the run: " + std::string(check::kRunLogFormats) + ")");
  }
  for (const std::string& log : c.logs) {
    SPPLAN_ASSIGN_OR_RETURN(const check::RunMeasurements one, check::read_run_log(log));
    check::merge_into(&c.run, one);
  }
  SPPLAN_ASSIGN_OR_RETURN(c.band, check::band_for(c.plan, runs_files));
  c.report = check::check_run(c.plan, c.run, c.band);
  return c;
}

std::string quantity_text(const std::string& quantity, double v) {
  char buf[64];
  if (quantity == "peak_memory") std::snprintf(buf, sizeof buf, "%.2f GiB", v / kGiB);
  else if (quantity == "step_time") std::snprintf(buf, sizeof buf, "%.4g s", v);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

const char* unit_key(const std::string& quantity) {
  return quantity == "peak_memory" ? "peak_memory_bytes" : quantity == "step_time" ? "step_time_s" : "tokens_per_s";
}

nlohmann::json check_json(const CheckedRun& c) {
  nlohmann::json predicted = nlohmann::json::object(), measured = nlohmann::json::object(), rows = nlohmann::json::array();
  for (const check::Comparison& x : c.report.comparisons) {
    predicted[unit_key(x.quantity)] = x.predicted;
    measured[unit_key(x.quantity)] = x.measured;
    rows.push_back({{"quantity", x.quantity}, {"measured_as", x.measured_as}, {"predicted", x.predicted},
                    {"measured", x.measured}, {"error_pct", x.error_pct()}});
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const check::Finding& f : c.report.findings) {
    findings.push_back({{"id", f.id}, {"words", f.words}, {"cause", f.cause}, {"not_the_plan", f.not_the_plan}});
  }
  auto stats = [](const ErrorStats& s) {
    return nlohmann::json{{"count", s.count}, {"mean_abs_pct", s.mean_abs_pct}, {"max_abs_pct", s.max_abs_pct}};
  };
  return {{"plan", c.plan_path},
          {"logs", c.logs},
          {"formats", c.run.formats},
          {"predicted", predicted},
          {"measured", measured},
          {"comparisons", rows},
          {"band",
           {{"scope", c.band.scope},
            {"memory", stats(c.band.memory)},
            {"speed", stats(c.band.speed)},
            {"your_memory", stats(c.band.your_memory)},
            {"your_speed", stats(c.band.your_speed)},
            {"memory_words", check::band_words(c.band.memory, c.band.your_memory, c.band.scope)},
            {"speed_words", check::band_words(c.band.speed, c.band.your_speed, c.band.scope)}}},
          {"findings", findings},
          {"as_planned", c.report.as_planned()}};
}

std::string check_text(const CheckedRun& c) {
  std::string text = "plan " + c.plan_path + ": " + c.plan.model.name + ", " + std::to_string(c.plan.cluster.num_gpus) +
                     " x " + c.plan.cluster.gpu.name + ", sp " + std::to_string(c.plan.knobs.sp) + " x cp " +
                     std::to_string(c.plan.knobs.cp) + "; logs: ";
  for (size_t i = 0; i < c.logs.size(); ++i) text += (i ? ", " : "") + c.logs[i] + " (" + c.run.formats[i] + ")";
  text += "\n";
  if (c.report.comparisons.empty()) text += "nothing to compare: the logs hold no memory, step time or tokens/s\n";
  char line[256];
  for (const check::Comparison& x : c.report.comparisons) {
    const bool memory = x.quantity == "peak_memory";
    const std::string band = check::band_words(memory ? c.band.memory : c.band.speed,
                                               memory ? c.band.your_memory : c.band.your_speed, c.band.scope);
    std::snprintf(line, sizeof line, "  %-13s predicted %-11s measured %-11s error %+6.1f%%  ", x.quantity.c_str(),
                  quantity_text(x.quantity, x.predicted).c_str(), quantity_text(x.quantity, x.measured).c_str(),
                  x.error_pct());
    text += line + band + " [" + x.measured_as + "]\n";
  }
  for (const check::Finding& f : c.report.findings) {
    text += std::string(f.not_the_plan ? "  NOT THE PLAN " : "  note ") + f.id + ": " + f.words + "; likely: " + f.cause + "\n";
  }
  text += c.report.as_planned() ? "as planned\n" : "the run is not the plan\n";
  return text;
}

}  // namespace

std::vector<FlagSpec> check_flag_specs() { return {plan_flag(), runs_flag(), json_flag_spec()}; }

std::vector<FlagSpec> calibrate_from_run_flag_specs() {
  return {{"from-run", false, "keep a checked run as a measured row instead of measuring this machine"},
          plan_flag(),
          {"out", true, "your GPU file: the run is appended to the runs file beside it (GPU.runs.json)",
           "a .toml path", "required"},
          json_flag_spec()};
}

int print_calibrate_from_run_help() {
  const Command command{"calibrate", "--from-run --plan P.toml RUNLOG... --out GPU.toml [--json]",
                        "Checks a run of your stack against its plan (as spplan check) and, when it is as planned, keeps it "
                        "as a measured row in GPU.runs.json beside --out, which check --runs and SPPLAN_RUNS count.",
                        "0 kept, 1 the run is not the plan (not kept), 2 bad input", calibrate_from_run_flag_specs()};
  std::cout << command_help(command);
  return kExitOk;
}

int cmd_check(int argc, const char* const* argv) {
  auto args = Args::parse(argc, argv, 1, check_flag_specs());
  if (!args.ok()) return fail(args.status());
  std::vector<std::string> runs = args->has("runs") ? comma_list(*args->get("runs")) : std::vector<std::string>{};
  for (const std::string& f : check::runs_files_from_environment()) runs.push_back(f);
  auto c = checked_run(*args, runs);
  if (!c.ok()) return fail(c.status());
  if (args->has("json")) {
    print_json(check_json(*c));
  } else {
    std::cout << check_text(*c);
  }
  return c->report.as_planned() ? kExitOk : kExitNotThePlan;
}

int cmd_calibrate_from_run(int argc, const char* const* argv) {
  auto args = Args::parse(argc, argv, 1, calibrate_from_run_flag_specs());
  if (!args.ok()) return fail(args.status());
  auto out = args->require("out", "your GPU file, e.g. --out my-h100.toml: the run goes to my-h100.runs.json beside it");
  if (!out.ok()) return fail(out.status());
  const std::string runs_file = check::runs_file_beside(*out);
  auto before = checked_run(*args, {});
  if (!before.ok()) return fail(before.status());
  std::vector<NamedPath> inputs = plan_input_files(before->plan_path, before->plan);
  for (const std::string& log : before->logs) inputs.push_back({"RUNLOG", log});
  if (Status s = check_not_an_input("--out's runs file", runs_file, inputs); !s) return fail(s);
  if (!before->report.as_planned()) {
    // A run that is not the plan measures the launch, not the planner: its error would widen the band.
    std::cerr << "spplan: " << before->plan_path << ": the run is not the plan (spplan check says why): not added to "
              << runs_file << " (allowed: runs that check as planned)\n";
    return kExitNotThePlan;
  }
  const nlohmann::json row = check::run_row(before->plan, before->report, before->logs);
  if (Status s = check::append_run(runs_file, row); !s) return fail(s);
  auto band = check::band_for(before->plan, {runs_file});
  if (!band.ok()) return fail(band.status());
  const std::string memory = check::band_words(band->memory, band->your_memory, band->scope);
  if (args->has("json")) {
    print_json({{"runs_file", runs_file}, {"row", row}, {"memory_words", memory},
                {"speed_words", check::band_words(band->speed, band->your_speed, band->scope)}});
  } else {
    std::cout << "added the run to " << runs_file << "; peak memory: " << memory << "\n";
  }
  return kExitOk;
}

}  // namespace spplan::cli
