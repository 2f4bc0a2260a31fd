#include "run_helpers.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include <gtest/gtest.h>

namespace spplan::engine::testing {
namespace fs = std::filesystem;
namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One scratch folder per test process, removed when the process ends.
struct Scratch {
  fs::path root;
  Scratch() {
    const char* t = std::getenv("TMPDIR");
    root = fs::path(t ? t : "/tmp") / ("spplan-engine-tests-" + std::to_string(::getpid()));
    fs::create_directories(root);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

std::string scratch_root() {
  static Scratch scratch;
  return scratch.root.string();
}

}  // namespace

// User + system seconds of this process's waited-for children, their own waited-for children
// included (the shell, timeout and the binary std::system runs).
static double children_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

RunResult run_shell(const std::string& command, int timeout_s) {
  static int counter = 0;
  const std::string base = scratch_root() + "/run" + std::to_string(counter++);
  const std::string line = "timeout --kill-after=5 " + std::to_string(timeout_s) + " sh -c " + quote(command) + " > " +
                           base + ".out 2> " + base + ".err";
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = children_cpu_s();
  const int status = std::system(line.c_str());
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu_seconds = children_cpu_s() - cpu0;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

RunResult run(const std::string& binary, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env, int timeout_s) {
  std::string cmd = "exec env";
  for (const auto& [k, v] : env) cmd += " " + k + "=" + quote(v);
  cmd += " " + quote(binary);
  for (const auto& a : args) cmd += " " + quote(a);
  return run_shell(cmd, timeout_s);
}

// Threads per rank: the cores split between the ranks (1 each when there are more ranks than
// cores), so a run never oversubscribes this machine and a one-rank run still uses every core.
std::string threads_per_rank(const std::vector<std::string>& args) {
  long nproc = 1;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--nproc") nproc = std::max(1L, std::atol(args[i + 1].c_str()));
  }
  const long cores = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  return std::to_string(std::max(1L, cores / nproc));
}

RunResult run_engine(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                     int timeout_s) {
  std::map<std::string, std::string> full_env{{"OMP_NUM_THREADS", threads_per_rank(args)}};
  for (const auto& [k, v] : env) full_env[k] = v;
  return run(SPPLAN_ENGINE_BIN, args, full_env, timeout_s);
}

nlohmann::json json_of(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << "stdout is not one JSON object: " << r.out << "\nstderr: " << r.err;
  return j.is_object() ? j : nlohmann::json();
}

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::path(scratch_root()) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}


std::vector<double> losses_of(const nlohmann::json& j) {
  return j.is_object() && j.contains("losses") ? j["losses"].get<std::vector<double>>() : std::vector<double>{};
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

}  // namespace spplan::engine::testing
