#include "engine/measure/validate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/device/cpu_info.hpp"
#include "engine/measure/validate_cases.hpp"
#include "engine/measure/validate_report.hpp"
#include "engine/run/options.hpp"
#include "planner/config/json_file.hpp"
#include "planner/config/loaders.hpp"
#include "planner/corpus/token_documents.hpp"

namespace spplan::engine {
namespace {

constexpr int64_t kBoundaryGranularity = 1024;  // tokens: max-seq is searched on multiples of this
constexpr int kGpuCaseTimeoutS = 900;           // an 8B ZeRO-3 offload case takes minutes; a hang does not pass

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string self_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("spplan-engine") : p.string();
}

// Runs a command line; returns its stdout, sets *rc to its exit code.
std::string capture(const std::string& command, int* rc) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (f == nullptr) {
    *rc = 127;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const int status = ::pclose(f);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

double pct(double measured, double predicted) {
  return measured > 0 ? 100.0 * (predicted - measured) / measured : std::nan("");
}

int bad_input(const std::string& message) {
  std::cerr << message << "\n";
  return 2;
}

struct Flags {
  bool json = false, quick = false, long_cases = false, ring = false, moe = false, window = false, packed = false;
  std::string calibration, gpu;
  int64_t shard = 0, shards = 1;  // --shard I/N: the cases whose index is I modulo N
};

// "I/N" with 0 <= I < N.
bool parse_shard(const std::string& text, int64_t* shard, int64_t* shards) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  auto number = [](const std::string& t, int64_t* out) {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoll(t);
    return true;
  };
  return number(text.substr(0, slash), shard) && number(text.substr(slash + 1), shards) && *shards >= 1 &&
         *shard < *shards;
}

Result<Flags> parse_flags(int argc, char** argv) {
  Flags f;
  if (argc < 3 || std::string(argv[2]) != "engine") {
    return Status::invalid("spplan-engine validate: expected \"engine\" (allowed: engine)");
  }
  auto args = parse_flags_only(argc, argv, 3, validate_flag_specs(), "spplan-engine validate engine",
                               "spplan validate engine --help");
  if (!args.ok()) return args.status();
  f.json = args->has("json");
  f.quick = args->has("quick");
  f.long_cases = args->has("long");
  f.ring = args->has("ring");
  f.moe = args->has("moe");
  f.window = args->has("window");
  f.packed = args->has("packed");
  std::string lists;  // the case lists asked for: "--long and --quick"
  for (const auto& [given, name] :
       {std::pair{f.long_cases, "--long"}, {f.quick, "--quick"}, {f.ring, "--ring"}, {f.moe, "--moe"},
        {f.window, "--window"}, {f.packed, "--packed"}}) {
    if (given) lists += (lists.empty() ? "" : " and ") + std::string(name);
  }
  if (lists.find(" and ") != std::string::npos) {
    return Status::invalid("spplan-engine validate engine: " + lists + ": choose one (allowed: one case list)");
  }
  f.calibration = args->get("calibration").value_or("");
  f.gpu = args->get("gpu").value_or("");
  if (auto v = args->get("shard"); v && !parse_shard(*v, &f.shard, &f.shards)) {
    return Status::invalid("spplan-engine validate engine: --shard: value \"" + *v +
                           "\" is not valid (allowed: I/N with 0 <= I < N, e.g. 0/3)");
  }
  return f;
}

// --calibration, or `spplan-engine calibrate` now.
Result<GpuSpec> calibrated_spec_for(const Flags& flags, const std::string& self) {
  std::string path = flags.calibration, tmp;
  if (path.empty()) {
    char tmpl[] = "/tmp/spplan-validate-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd >= 0) ::close(fd);
    tmp = std::string(tmpl) + ".toml";
    if (fd >= 0) ::unlink(tmpl);
    int rc = 0;
    capture(quote(self) + " calibrate --out " + quote(tmp) + " 2>/dev/null", &rc);
    if (rc != 0) return Status::internal("spplan-engine validate engine: calibrate failed (exit " + std::to_string(rc) + ")");
    path = tmp;
  }
  auto spec = load_gpu(path, "--calibration");
  if (!tmp.empty()) ::unlink(tmp.c_str());
  if (!spec.ok()) return Status::invalid("--calibration: " + spec.status().message());
  return *spec;
}

Result<GpuSpec> preset_for(const Flags& flags, const CudaDevice& device) {
  if (!flags.gpu.empty()) return load_gpu(flags.gpu, "--gpu");
  std::vector<GpuSpec> presets;
  for (const std::string& name : gpu_presets()) {
    if (auto g = load_gpu(name); g.ok()) presets.push_back(*g);
  }
  if (auto g = match_gpu_preset(device, presets)) return *g;
  return Status::invalid("spplan-engine validate engine: device \"" + device.name +
                         "\" matches no GPU preset by name and memory (allowed: --gpu PRESET|FILE.toml)");
}

// The threads each rank of a CPU case runs: this machine's cores split between its ranks.
int64_t case_threads(const ValidateCase& c) {
  const int64_t cores = std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  return std::max<int64_t>(1, cores / c.world);
}

// A packed case's documents, counted from the token file its run reads and cut as the run cuts
// its stream, one sequence after another (corpus::Packing::kWrapped; the file's documents are of
// one length, so the order wrapped shuffles them into is the file's), so that attention is priced
// per document (costmodel/packed_attention.hpp).
Status price_documents(const ValidateCase& c, PlanSpec* plan) {
  SPPLAN_ASSIGN_OR_RETURN(const corpus::TokenDocuments docs, corpus::count_token_documents({c.data}, kPackedEosId));
  plan->documents = corpus::pack(docs.corpus, plan->seq_len, corpus::Packing::kWrapped).pieces;
  return Status::ok();
}

// `shared`: the case's ranks share this CPU, each on OMP_NUM_THREADS = cores / ranks (run_case).
Result<Prediction> predict_case(const ValidateCase& c, const GpuSpec& machine, bool shared) {
  const std::vector<std::string> args = run_args(c, 1);
  std::vector<const char*> argv = {"spplan-engine"};
  for (const auto& a : args) argv.push_back(a.c_str());
  auto opts = parse_run_options(static_cast<int>(argv.size()), argv.data(), 2);
  if (!opts.ok()) return Status::invalid(case_name(c) + ": " + opts.status().message());
  if (auto s = check_run_options(&*opts, c.world); !s) return Status::invalid(case_name(c) + ": " + s.message());
  if (c.doc_tokens > 0) SPPLAN_RETURN_IF_ERROR(price_documents(c, &opts->plan));
  // The ranks share this CPU by the rule `spplan run` and `spplan plan` price it with
  // (costmodel/host_cpu.hpp), at the threads run_case gives each.
  return predict(opts->plan, Pricing{machine, true, shared ? case_threads(c) : 0});
}

void add_prediction(nlohmann::json* row, const std::string& prefix, const Prediction& p, double mem, double time) {
  const double pmem = p.peak_memory_bytes.value_or(std::nan("")), ptime = p.step_time_s.value_or(std::nan(""));
  (*row)[prefix + "predicted_peak_memory_bytes"] = pmem;
  (*row)[prefix + "mem_error_pct"] = pct(mem, pmem);
  (*row)[prefix + "predicted_step_time_s"] = ptime;
  (*row)[prefix + "time_error_pct"] = pct(time, ptime);
}

// One case, priced then run. A run that fails (or a boundary case that goes the wrong way) is a
// row with "error"; bad case flags are bad input.
Result<nlohmann::json> run_case(const ValidateCase& c, int64_t steps, const Machines& m, const std::string& self) {
  SPPLAN_ASSIGN_OR_RETURN(const Prediction pred, predict_case(c, m.calibrated, m.shared));
  std::optional<Prediction> preset;
  if (m.preset) {
    SPPLAN_ASSIGN_OR_RETURN(preset, predict_case(c, *m.preset, false));
  }
  std::string cmd = "env";
  if (m.shared) {
    cmd += " OMP_NUM_THREADS=" + std::to_string(case_threads(c));
    // each kernel class timed in the run (kernel_clock.hpp); a memory-only case has no time to compare
    if (!c.memory_only) cmd += " SPPLAN_ENGINE_KERNEL_CLOCK=1";
  } else {
    cmd = "timeout " + std::to_string(kGpuCaseTimeoutS) + " env";
  }
  cmd += " " + quote(self);
  for (const auto& a : run_args(c, c.memory_only ? 1 : steps)) cmd += " " + quote(a);
  int rc = 0;
  const nlohmann::json j = nlohmann::json::parse(capture(cmd + " 2>/dev/null", &rc), nullptr, false);
  const char* expect = c.expect == ValidateCase::Expect::kRuns             ? "runs"
                       : c.expect == ValidateCase::Expect::kFitsAtBoundary ? "fits at max-seq"
                                                                           : "oom past max-seq";
  nlohmann::json row = {{"case", case_name(c)}, {"model", c.model}, {"seq", c.seq},    {"sp", c.sp},
                        {"world", c.world},     {"knobs", c.knobs}, {"expect", expect}};
  if (c.memory_only) row["memory_only"] = true;
  const RunOutcome outcome{rc, j.is_object() && j.value("oom", false)};
  if (outcome.oom) row["oom"] = true;
  if (const std::string error = outcome_error(c, outcome); !error.empty()) {
    row["error"] = error;
    return row;
  }
  if (outcome.oom) return row;  // the expected out-of-memory report: nothing to compare
  if (!j.is_object() || !j["peak_memory_bytes"].is_number() || !j["step_time_s"].is_number()) {
    row["error"] = "run failed (no report on stdout, exit " + std::to_string(rc) + ")";
    return row;
  }
  const double mem = j["peak_memory_bytes"].get<double>(), time = j["step_time_s"].get<double>();
  const double host = j.value("peak_host_memory_bytes", 0.0), phost = pred.host_memory_bytes.value_or(0.0);
  row.update({{"measured_peak_memory_bytes", mem},
              {"measured_step_time_s", time},
              {"measured_host_memory_bytes", host},
              {"predicted_host_memory_bytes", phost},
              {"measured_memory", j.value("memory", nlohmann::json::object())},
              {"predicted_memory", pred.memory_bytes},
              {"measured_phases_s", j.value("phases", nlohmann::json::object())}});
  if (c.memory_only) {  // one step: its time includes the first step's warm-up, nothing to compare
    row.erase("measured_step_time_s");
    row.erase("measured_phases_s");
    const double pmem = pred.peak_memory_bytes.value_or(std::nan(""));
    row.update({{"predicted_peak_memory_bytes", pmem}, {"mem_error_pct", pct(mem, pmem)}});
    if (host > 0 || phost > 0) row["host_mem_error_pct"] = pct(host, phost);
    return row;
  }
  if (j.contains("kernel_classes_s") && j["kernel_classes_s"].is_object()) {
    row["measured_kernel_classes_s"] = j["kernel_classes_s"];
    row["predicted_kernel_classes_s"] = pred.kernel_classes_s;
    // Which ops a class's seconds went to: what a probe has to measure when a class misses.
    row["measured_kernel_top_ops_s"] = j.value("kernel_top_ops_s", nlohmann::json());
  }
  add_prediction(&row, "", pred, mem, time);
  if (preset) add_prediction(&row, "preset_", *preset, mem, time);
  if (host > 0 || phost > 0) row["host_mem_error_pct"] = pct(host, phost);
  return row;
}

// The packed cases' token file, in a temporary folder removed with it: every step's sequences plus
// the last label, so that no window wraps around.
class PackedData {
 public:
  static Result<std::unique_ptr<PackedData>> make(std::vector<ValidateCase>* cases, int64_t steps) {
    auto d = std::unique_ptr<PackedData>(new PackedData);
    for (ValidateCase& c : *cases) {
      if (c.doc_tokens == 0) continue;
      if (d->dir_.empty()) {
        char tmpl[] = "/tmp/spplan-validate-packed-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) return Status::internal("spplan-engine validate engine: cannot make a temporary folder");
        d->dir_ = tmpl;
      }
      c.data = d->dir_ + "/docs-" + std::to_string(c.doc_tokens) + "-s" + std::to_string(c.seq) + ".u16.bin";
      SPPLAN_RETURN_IF_ERROR(write_packed_data(c.data, steps * c.world * c.seq + 1, c.doc_tokens));  // dp <= world
    }
    return d;
  }
  ~PackedData() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

 private:
  PackedData() = default;
  std::string dir_;
};

// What a packed case's prediction compares: the run's documents, which the plan holds too
// (price_documents).
void add_packed_note(nlohmann::json* row, const ValidateCase& c) {
  (*row)["documents"] = {{"tokens_each", c.doc_tokens}, {"per_sequence", c.seq / c.doc_tokens}};
  (*row)["priced_as"] = "PlanSpec::documents counted from the case's token file, attention per document";
}

}  // namespace

std::vector<FlagSpec> validate_flag_specs() {
  return {{"json", false, "print one JSON object (cases, rows with both memory breakdowns, errors, device)"},
          {"quick", false, "the short case list (a few minutes on a CPU)"},
          {"long", false,
           "CPU: the long-sequence memory-only cases instead (micro-llama at 64K and 128K tokens, one step each; "
           "about 15 minutes on 2 cores)"},
          {"ring", false,
           "CPU: only the ring-against-Ulysses cases (ring, Ulysses x ring and Ulysses at equal degree; about 5 "
           "minutes on 2 cores)"},
          {"moe", false,
           "CPU: only the mixture-of-experts cases (tiny-qwen3-moe and tiny-glm-moe; about 4 minutes on 2 cores)"},
          {"window", false, "CPU: only the sliding-window cases (tiny-mistral; about 2 minutes on 2 cores)"},
          {"packed", false,
           "CPU: only the packed-document cases (--eos-id: documents of 1024 tokens on a ring, Ulysses x ring and "
           "Ulysses; about 3 minutes on 2 cores)"},
          {"calibration", true, "price the cases on this calibrated GPU file instead of calibrating first",
           "a GPU TOML file written by spplan calibrate", "spplan calibrate runs first"},
          {"gpu", true, "on a CUDA device: the preset the \"preset d %\" columns price with",
           "a GPU preset or GPU TOML file (only with a CUDA device)", "the preset that matches the device"},
          {"shard", true, "run every N-th case from the I-th (a lease with a per-command time limit)",
           "I/N with 0 <= I < N, e.g. 0/3", "0/1: every case"}};
}

int validate_main(int argc, char** argv, const ValidateDevice& device) {
  auto flags = parse_flags(argc, argv);
  if (!flags.ok()) return bad_input(flags.status().message());
  const bool cuda = device.cuda_gpus > 0;
  if (!cuda && !flags->gpu.empty()) {
    return bad_input("spplan-engine validate engine: --gpu " + flags->gpu +
                     ": there is no CUDA device (allowed: --gpu only where one is; on a CPU use --calibration)");
  }
  const std::string self = self_path();
  Machines m;
  m.shared = !cuda;
  m.device = cuda ? device.device.name : this_cpu();  // the table's times belong to this CPU
  if (cuda) {
    auto preset = preset_for(*flags, device.device);
    if (!preset.ok()) return bad_input(preset.status().message());
    m.preset = *preset;
  }
  auto calibrated = calibrated_spec_for(*flags, self);
  if (!calibrated.ok()) {
    std::cerr << calibrated.status().message() << "\n";
    return calibrated.status().code() == Status::Code::kInvalidInput ? 2 : 1;
  }
  m.calibrated = *calibrated;

  if (cuda && (flags->long_cases || flags->ring || flags->moe || flags->window || flags->packed)) {
    const std::string flag = flags->long_cases ? "--long"
                             : flags->ring     ? "--ring"
                             : flags->moe      ? "--moe"
                             : flags->window   ? "--window"
                                               : "--packed";
    return bad_input("spplan-engine validate engine: " + flag + ": these cases are the CPU's (allowed: " + flag +
                     " without a CUDA device)");
  }
  std::vector<ValidateCase> cases = cuda               ? gpu_cases(device.cuda_gpus, flags->quick)
                                    : flags->long_cases ? long_cpu_cases()
                                    : flags->ring       ? cpu_ring_cases()
                                    : flags->moe        ? cpu_moe_cases()
                                    : flags->window     ? cpu_window_cases()
                                    : flags->packed     ? cpu_packed_cases()
                                                        : cpu_cases(flags->quick);
  if (cuda) {
    for (const ValidateCase& plan : gpu_boundary_plans(device.cuda_gpus, flags->quick)) {
      auto b = boundary_cases(plan, m.calibrated, kBoundaryGranularity);
      if (!b.ok()) return bad_input(b.status().message());
      cases.insert(cases.end(), b->begin(), b->end());
    }
  }
  // --shard: every N-th case from the I-th, so that a long list can run as N shorter commands.
  std::vector<ValidateCase> shard;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (static_cast<int64_t>(i) % flags->shards == flags->shard) shard.push_back(cases[i]);
  }
  cases = shard;
  const int64_t steps = cuda ? 4 : (flags->quick ? 2 : 3);
  auto data = PackedData::make(&cases, steps);
  if (!data.ok()) {
    std::cerr << data.status().message() << "\n";
    return 1;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidateCase& c : cases) {
    auto row = run_case(c, steps, m, self);
    if (!row.ok()) return bad_input(row.status().message());
    if (c.doc_tokens > 0) add_packed_note(&*row, c);
    rows.push_back(*row);
    if (!flags->json) std::cerr << "validate engine: " << (*row)["case"].get<std::string>() << " done\n";
  }
  const CaseSummary sum = summarize_cases(rows);
  if (flags->json) {
    std::cout << dump_utf8(summary_json(sum, m, rows), 2) << "\n";
  } else {
    print_table(rows, sum, m);
  }
  return sum.failed == 0 ? 0 : 1;
}

}  // namespace spplan::engine
