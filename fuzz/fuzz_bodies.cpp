#include "fuzz/fuzz_bodies.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/report.hpp"
#include "cli/validate_published.hpp"
#include "planner/check/run_check.hpp"
#include "planner/check/run_log.hpp"
#include "planner/config/loaders.hpp"
#include "planner/core/parse.hpp"
#include "planner/corpus/corpus.hpp"

namespace spplan::fuzz {
namespace {

// The rule every message keeps (STYLE.md): one line, so scripts and the GUI can show it whole.
void require_one_line(const Status& s) {
  if (!s.is_ok() && s.message().find('\n') != std::string::npos) {
    std::cerr << "fuzz: a message of more than one line: " << s.message() << "\n";
    std::abort();
  }
}

// A folder of this process's own under $TMPDIR (or /tmp): the loaders read files, so each input
// is written to one first. The process id is written with 7 digits (Linux's pid_max is at most
// 4194304): the folder's name is in messages, and a name one character longer changes how often
// loops over a message run, which libFuzzer counts as coverage, so the deterministic gate
// (scripts/sanitize.sh, fixed TMPDIR) would explore other inputs from one run to the next.
const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    char pid[16];
    std::snprintf(pid, sizeof pid, "%07d", static_cast<int>(::getpid()));
    const std::string d = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/spplan-fuzz-" + pid;
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::string write_input(std::string_view bytes, const std::string& name) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Runs `f` with std::cout and std::cerr discarded (the CLI prints tables; printf output is the
// driver's to silence: -close_fd_mask).
template <typename F>
void quietly(F&& f) {
  std::ostringstream sink;
  auto* out = std::cout.rdbuf(sink.rdbuf());
  auto* err = std::cerr.rdbuf(sink.rdbuf());
  f();
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
}

}  // namespace

void model_toml(std::string_view bytes) { require_one_line(load_model(write_input(bytes, "model.toml")).status()); }

void gpu_toml(std::string_view bytes) { require_one_line(load_gpu(write_input(bytes, "gpu.toml")).status()); }

void plan_toml(std::string_view bytes) { require_one_line(load_plan(write_input(bytes, "plan.toml")).status()); }

// Records are loaded once per file (trainer_loader.cpp caches them by path), so each input gets a
// file named by its content: the same bytes read the same record, other bytes are read afresh.
// The name has a fixed length (see scratch_dir).
void trainer_toml(std::string_view bytes) {
  char name[40];
  std::snprintf(name, sizeof name, "trainer-%016zx.toml", std::hash<std::string_view>{}(bytes));
  require_one_line(load_trainer(write_input(bytes, name)).status());
}

void config_json(std::string_view bytes) {
  std::filesystem::create_directories(scratch_dir() + "/model");
  require_one_line(load_model(write_input(bytes, "model/config.json")).status());
}

// The report is also printed as --json prints it: a cell that is not UTF-8 made dump() throw.
void validation_csv(std::string_view bytes) {
  const auto report = cli::validate_published(write_input(bytes, "published.csv"));
  require_one_line(report.status());
  if (report.ok()) (void)cli::json_text(nlohmann::json{{"rows", report->rows}, {"summary", report->summary}});
}

void seq_len(std::string_view bytes) {
  const auto seq = parse_seq_len("--seq", bytes);
  require_one_line(seq.status());
  if (seq.ok() && (*seq < 1 || *seq > kMaxSeqLen)) {
    std::cerr << "fuzz: parse_seq_len accepted " << *seq << ", outside 1.." << kMaxSeqLen << "\n";
    std::abort();
  }
  require_one_line(parse_int("--gpus", bytes, 1, 1 << 20).status());
  const auto number = parse_double("--lr", bytes, 0.0, 1.0);
  require_one_line(number.status());
  if (number.ok() && !(*number >= 0.0 && *number <= 1.0)) std::abort();
}

void cli_args(std::string_view bytes) {
  constexpr size_t kMaxArgs = 24;
  std::vector<std::string> args{"spplan"};
  for (size_t begin = 0; begin <= bytes.size() && args.size() <= kMaxArgs;) {
    const size_t end = std::min(bytes.find('\n', begin), bytes.size());
    args.emplace_back(bytes.substr(begin, end - begin));
    begin = end + 1;
  }
  for (const auto& a : args) {
    // Paths stay inside the scratch folder (the CLI writes --out, --trace, --svg files), and
    // run/calibrate start the engine, which is not what is fuzzed here.
    if (a.find('/') != std::string::npos || a.find('\0') != std::string::npos || a == "run" || a == "calibrate") return;
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(scratch_dir());
  quietly([&] { cli::run_command(static_cast<int>(argv.size()), argv.data()); });
  std::filesystem::current_path(cwd);
}

// Every reader through the format detection, as `spplan check` reads a file; what reads is held
// against a Ulysses plan (sp 2), so the findings' arithmetic sees whatever numbers a log holds.
void run_log(std::string_view bytes) {
  const auto run = check::read_run_log_text("run.log", bytes);
  require_one_line(run.status());
  if (!run.ok()) return;
  static const auto plan = load_plan(write_input(
      "seq_len = 4096\n[model]\npreset = \"tiny-llama\"\n[gpu]\npreset = \"h100-80gb\"\n[cluster]\nnum_gpus = 2\n"
      "[knobs]\nsp = 2\nzero_stage = 0\nact_ckpt = \"none\"\nprecision = \"fp32\"\n",
      "check-plan.toml"));
  if (!plan.ok()) {  // the plan is the body's own: it must load
    std::cerr << "fuzz: run_log: " << plan.status().message() << "\n";
    std::abort();
  }
  const check::CheckReport report = check::check_run(*plan, *run, check::Band{});
  for (const check::Finding& f : report.findings) {
    if (f.words.find('\n') != std::string::npos) std::abort();
  }
}

// A lengths file as plan --lengths reads it, then packed by every packing at a short and a long
// sequence, each result held to what a packing keeps: no piece past seq_len, the pieces ascending,
// real tokens and padding filling the sequences exactly, no token lost but those none cuts.
// wrapped draws every document, so it packs only corpora of up to 10^5 (a fuzzed count reaches 2^31).
void lengths_file(std::string_view bytes) {
  const auto corpus = corpus::read_lengths_text("lengths.csv", bytes);
  require_one_line(corpus.status());
  if (!corpus.ok()) return;
  for (const int64_t seq_len : {int64_t{7}, int64_t{1} << 20}) {
    for (const std::string& name : corpus::packing_names()) {
      const corpus::Packing packing = *corpus::parse_packing("--packing", name);
      if (packing == corpus::Packing::kWrapped && corpus->documents() > 100'000) continue;
      const corpus::PackedCorpus p = corpus::pack(*corpus, seq_len, packing);
      int64_t previous = 0;
      for (const auto& [length, count] : p.pieces.length_counts) {
        if (length <= previous || length > seq_len || count < 1) std::abort();
        previous = length;
      }
      const double real = p.pieces.real_tokens(), filled = static_cast<double>(p.pieces.sequences) * static_cast<double>(seq_len);
      if (real + p.padding_tokens != filled || p.padding_tokens < 0) std::abort();  // sums of whole numbers below 2^53
      if (real + p.tokens_cut != corpus->tokens()) std::abort();
    }
  }
}

const std::vector<Target>& targets() {
  static const std::vector<Target> kTargets{
      {"model_toml", model_toml, {"configs/models", "tests/planner/config/data"}, ".toml"},
      {"gpu_toml", gpu_toml, {"configs/gpus", "tests/planner/config/data"}, ".toml"},
      {"plan_toml", plan_toml, {"configs/plans", "tests/planner/config/data"}, ".toml"},
      {"trainer_toml", trainer_toml, {"configs/trainers"}, ".toml"},
      {"config_json", config_json, {"tests/planner/config/data", "tests/planner/config/data/transformers5"}, ".json"},
      {"validation_csv", validation_csv, {"validation", "tests/cli/data"}, ".csv"},
      {"seq_len", seq_len, {"fuzz/seeds/seq_len"}, ""},
      {"cli_args", cli_args, {"fuzz/seeds/cli"}, ""},
      {"run_log", run_log, {"tests/planner/check/data", "tests/planner/check/data/gpu",
                            "tests/planner/check/data/gpu/h100-2026-11-26", "tests/planner/check/data/hf_sp2",
                            "tests/planner/check/data/hf_sp2_dropped", "tests/planner/check/data/arctic_sp2",
                            "tests/planner/check/data/torch_snapshot"}, ""},
      {"lengths_file", lengths_file, {"fuzz/seeds/lengths_file"}, ""},
  };
  return kTargets;
}

const Target* find_target(std::string_view name) {
  for (const auto& t : targets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace spplan::fuzz
