#include "engine/validate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.hpp"
#include "engine/predict.hpp"
#include "planner/config/loaders.hpp"

namespace spplan::engine {
namespace {

struct Case {
  int64_t seq, sp, world;  // world = dp x sp ranks
  std::vector<std::string> knobs;  // knob flags beyond --sp
};

// tiny-llama. Chosen to cover seq, sp, act-ckpt, ZeRO stages, tiling, offload and bf16 within a few minutes.
// ZeRO 2/3 cases reduce in buckets of 256K elements, below the largest unit (the 1M-element
// embedding and head): DeepSpeed allocates its reduce bucket whole (what the costmodel prices),
// the engine one slab at a time, and the two agree when the bucket is the smaller.
const std::vector<Case> kFull = {
    {4096, 1, 1, {"--act-ckpt", "none"}},  {4096, 2, 2, {"--act-ckpt", "none"}},
    {4096, 4, 4, {"--act-ckpt", "none"}},  {4096, 1, 1, {"--act-ckpt", "full"}},
    {8192, 1, 1, {"--act-ckpt", "none"}},  {8192, 2, 2, {"--act-ckpt", "full"}},
    {8192, 4, 4, {"--act-ckpt", "none"}},  {16384, 2, 2, {"--act-ckpt", "full"}},
    {16384, 4, 4, {"--act-ckpt", "none"}},
    {8192, 2, 4, {"--act-ckpt", "full", "--zero", "1"}},
    {8192, 2, 4, {"--act-ckpt", "full", "--zero", "2", "--reduce-bucket", "262144"}},
    {8192, 2, 4, {"--act-ckpt", "full", "--zero", "3", "--reduce-bucket", "262144"}},
    {8192, 1, 1, {"--act-ckpt", "full", "--tiled-loss"}},
    {8192, 2, 2, {"--act-ckpt", "full", "--tiled-mlp", "--tiled-loss"}},
    {16384, 4, 4, {"--act-ckpt", "full", "--zero", "3", "--reduce-bucket", "262144", "--tiled-mlp", "--tiled-loss"}},
    {8192, 2, 2, {"--act-ckpt", "offload", "--zero", "1", "--offload-optimizer", "cpu"}},
    {16384, 2, 4, {"--act-ckpt", "offload", "--zero", "3", "--reduce-bucket", "262144", "--offload-optimizer", "cpu",
                   "--offload-params", "cpu"}},
    {8192, 2, 2, {"--act-ckpt", "full", "--precision", "bf16"}},
    {8192, 2, 4, {"--act-ckpt", "full", "--zero", "3", "--reduce-bucket", "262144", "--precision", "bf16"}},
    {8192, 2, 2, {"--act-ckpt", "full", "--tiled-loss", "--precision", "bf16", "--sp-comm-dtype", "bf16"}}};
const std::vector<Case> kQuick = {
    {2048, 1, 1, {"--act-ckpt", "none"}},
    {2048, 2, 2, {"--act-ckpt", "none"}},
    {2048, 2, 2, {"--act-ckpt", "full", "--zero", "3", "--reduce-bucket", "262144", "--tiled-loss"}},
    {2048, 2, 2, {"--act-ckpt", "offload", "--zero", "3", "--reduce-bucket", "262144", "--offload-optimizer", "cpu",
                  "--offload-params", "cpu"}}};

// "tiny-llama s8k sp2 w4 act-ckpt-full zero-3 tiled-loss"
std::string case_name(const Case& c) {
  std::string name = "tiny-llama s" + std::to_string(c.seq / 1024) + "k sp" + std::to_string(c.sp);
  if (c.world != c.sp) name += " w" + std::to_string(c.world);
  for (size_t i = 0; i < c.knobs.size(); ++i) {
    name += " " + c.knobs[i].substr(2);  // "--zero" -> "zero"
    const bool has_value = i + 1 < c.knobs.size() && c.knobs[i + 1].rfind("--", 0) != 0;
    if (has_value) name += "-" + c.knobs[++i];
  }
  return name;
}

constexpr double kMiB = 1024.0 * 1024.0;

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

// One case: the plan as the run sees it, priced on this machine, then run and measured. The ranks
// share the machine: each gets 1/world of its compute, memory bandwidth and copy rate (threads per
// rank = cores / world). A run that fails is a row with "error"; bad case flags are bad input.
Result<nlohmann::json> run_case(const Case& c, int64_t steps, const GpuSpec& machine, const std::string& self) {
  std::vector<std::string> args = {"run", "--model", "tiny-llama", "--seq", std::to_string(c.seq),
                                   "--sp", std::to_string(c.sp)};
  args.insert(args.end(), c.knobs.begin(), c.knobs.end());
  for (const std::string& a : {std::string("--nproc"), std::to_string(c.world), std::string("--steps"),
                               std::to_string(steps), std::string("--seed"), std::string("1"), std::string("--json")}) {
    args.push_back(a);
  }
  const std::string name = case_name(c);
  std::vector<const char*> cargv = {"spplan-engine"};
  for (const auto& a : args) cargv.push_back(a.c_str());
  auto opts = parse_run_options(static_cast<int>(cargv.size()), cargv.data(), 2);
  if (!opts.ok()) return Status::invalid(name + ": " + opts.status().message());
  if (auto s = check_run_options(&*opts, c.world); !s) return Status::invalid(name + ": " + s.message());
  GpuSpec share = machine;
  const double w = static_cast<double>(c.world);
  share.bf16_tflops /= w;
  share.fp32_tflops /= w;
  share.hbm_GBps /= w;
  share.pcie_GBps /= w;  // calibrate measures it as a memory copy: the same shared bandwidth
  const Prediction pred = predict(opts->plan, Pricing{share, true});

  const int64_t cores = std::max<long>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::string cmd = "env OMP_NUM_THREADS=" + std::to_string(std::max<int64_t>(1, cores / c.world)) + " " + quote(self);
  for (const auto& a : args) cmd += " " + quote(a);
  int rc = 0;
  const nlohmann::json j = nlohmann::json::parse(capture(cmd + " 2>/dev/null", &rc), nullptr, false);
  nlohmann::json row = {{"case", name}, {"seq", c.seq}, {"sp", c.sp}, {"world", c.world}, {"knobs", c.knobs}};
  if (rc != 0 || !j.is_object() || !j["peak_memory_bytes"].is_number() || !j["step_time_s"].is_number()) {
    row["error"] = "run failed (exit " + std::to_string(rc) + ")";
    return row;
  }
  const double mem = j["peak_memory_bytes"].get<double>(), time = j["step_time_s"].get<double>();
  const double host = j.value("peak_host_memory_bytes", 0.0);
  const double pmem = pred.peak_memory_bytes.value_or(std::nan("")), ptime = pred.step_time_s.value_or(std::nan(""));
  const double phost = pred.host_memory_bytes.value_or(0.0);
  row.update({{"measured_peak_memory_bytes", mem},
              {"predicted_peak_memory_bytes", pmem},
              {"mem_error_pct", pct(mem, pmem)},
              {"measured_step_time_s", time},
              {"predicted_step_time_s", ptime},
              {"time_error_pct", pct(time, ptime)},
              {"measured_host_memory_bytes", host},
              {"predicted_host_memory_bytes", phost},
              {"measured_memory", j.value("memory", nlohmann::json::object())},
              {"predicted_memory", pred.memory_bytes},
              {"measured_phases_s", j.value("phases", nlohmann::json::object())}});
  if (host > 0 || phost > 0) row["host_mem_error_pct"] = pct(host, phost);
  return row;
}

struct Summary {
  int ok = 0, failed = 0;
  double max_mem = 0, max_time = 0, max_host = 0, mean_mem = std::nan(""), mean_time = std::nan("");
};

Summary summarize(const nlohmann::json& rows) {
  Summary s;
  double sum_mem = 0, sum_time = 0;
  for (const auto& r : rows) {
    if (r.contains("error")) {
      ++s.failed;
      continue;
    }
    ++s.ok;
    const double dm = std::abs(r["mem_error_pct"].get<double>()), dt = std::abs(r["time_error_pct"].get<double>());
    s.max_mem = std::max(s.max_mem, dm);
    s.max_time = std::max(s.max_time, dt);
    sum_mem += dm;
    sum_time += dt;
    if (r.contains("host_mem_error_pct")) s.max_host = std::max(s.max_host, std::abs(r["host_mem_error_pct"].get<double>()));
  }
  if (s.ok > 0) s.mean_mem = sum_mem / s.ok, s.mean_time = sum_time / s.ok;
  return s;
}

void print_table(const nlohmann::json& rows, const Summary& sum) {
  int width = 4;  // the longest case name
  for (const auto& r : rows) width = std::max(width, static_cast<int>(r["case"].get<std::string>().size()));
  std::printf("%-*s %12s %12s %8s %10s %10s %8s %8s\n", width, "case", "meas MiB", "pred MiB", "d %", "meas s",
              "pred s", "d %", "host d %");
  for (const auto& r : rows) {
    const std::string name = r["case"].get<std::string>();
    if (r.contains("error")) {
      std::printf("%-*s %s\n", width, name.c_str(), r["error"].get<std::string>().c_str());
      continue;
    }
    char host[32] = "       -";
    if (r.contains("host_mem_error_pct")) std::snprintf(host, sizeof host, "%+8.1f", r["host_mem_error_pct"].get<double>());
    std::printf("%-*s %12.1f %12.1f %+8.1f %10.3f %10.3f %+8.1f %s\n", width, name.c_str(),
                r["measured_peak_memory_bytes"].get<double>() / kMiB, r["predicted_peak_memory_bytes"].get<double>() / kMiB,
                r["mem_error_pct"].get<double>(), r["measured_step_time_s"].get<double>(),
                r["predicted_step_time_s"].get<double>(), r["time_error_pct"].get<double>(), host);
  }
  std::printf("mean |delta|: memory %.1f %%, time %.1f %%; max |delta|: memory %.1f %%, time %.1f %%, host memory "
              "%.1f %% (%d cases",
              sum.mean_mem, sum.mean_time, sum.max_mem, sum.max_time, sum.max_host, sum.ok);
  std::printf(sum.failed ? ", %d failed)\n" : ")\n", sum.failed);
}

}  // namespace

int validate_main(int argc, char** argv) {
  // argv: spplan-engine validate engine [flags]
  bool json = false, quick = false;
  std::string calibration;
  if (argc < 3 || std::strcmp(argv[2], "engine") != 0) {
    return bad_input("spplan-engine validate: expected \"engine\" (allowed: engine)");
  }
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--calibration" && i + 1 < argc) {
      calibration = argv[++i];
    } else {
      return bad_input("spplan-engine validate engine: argument \"" + a +
                       "\" is not known (allowed: --json, --quick, --calibration FILE.toml)");
    }
  }
  const std::string self = self_path();

  // The machine's spec: given, or measured now.
  std::string tmp_spec;
  if (calibration.empty()) {
    char tmpl[] = "/tmp/spplan-validate-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd >= 0) ::close(fd);
    tmp_spec = std::string(tmpl) + ".toml";
    if (fd >= 0) ::unlink(tmpl);
    int rc = 0;
    capture(quote(self) + " calibrate --out " + quote(tmp_spec) + " 2>/dev/null", &rc);
    if (rc != 0) {
      std::cerr << "spplan-engine validate engine: calibrate failed (exit " << rc << ")\n";
      return 1;
    }
    calibration = tmp_spec;
  }
  auto machine = load_gpu(calibration);
  if (!tmp_spec.empty()) ::unlink(tmp_spec.c_str());
  if (!machine.ok()) return bad_input("--calibration: " + machine.status().message());

  const auto& cases = quick ? kQuick : kFull;
  nlohmann::json rows = nlohmann::json::array();
  for (const Case& c : cases) {
    auto row = run_case(c, quick ? 2 : 3, *machine, self);
    if (!row.ok()) return bad_input(row.status().message());
    rows.push_back(*row);
    if (!json) std::cerr << "validate engine: " << (*row)["case"].get<std::string>() << " done\n";
  }
  const Summary sum = summarize(rows);
  if (json) {
    std::cout << nlohmann::json({{"cases", sum.ok},
                                 {"failed", sum.failed},
                                 {"max_mem_error_pct", sum.max_mem},
                                 {"max_time_error_pct", sum.max_time},
                                 {"max_host_mem_error_pct", sum.max_host},
                                 {"mean_mem_error_pct", sum.mean_mem},
                                 {"mean_time_error_pct", sum.mean_time},
                                 {"machine", machine->name},
                                 {"rows", rows}})
                     .dump(2)
              << "\n";
  } else {
    print_table(rows, sum);
  }
  const int failed = sum.failed;
  return failed == 0 ? 0 : 1;
}

}  // namespace spplan::engine
