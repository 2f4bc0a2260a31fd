// Running spplan-engine (and the Ulysses worker) as real processes from the tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spplan::engine::testing {

struct RunResult {
  int exit_code = -1;  // 124 when `timeout` had to stop it
  std::string out, err;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system time of the command and everything it waited for
};

// Runs `binary args...` under `timeout`, with extra environment variables, capturing both streams.
RunResult run(const std::string& binary, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env = {}, int timeout_s = 300);
// spplan-engine with OMP_NUM_THREADS = max(1, cores / --nproc) unless `env` sets it.
RunResult run_engine(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                     int timeout_s = 300);

// Runs a shell command line (for starting ranks by hand, as torchrun would).
RunResult run_shell(const std::string& command, int timeout_s = 300);

// The one JSON object --json prints; fails the test (and returns null) when it is not there.
nlohmann::json json_of(const RunResult& r);

// A fresh empty folder under the test temp folder.
std::string fresh_dir(const std::string& name);

// Writes bytes to a file and returns its path.
std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes);


std::vector<double> losses_of(const nlohmann::json& j);

// Largest relative difference between two loss lists (inf when the lengths differ).
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace spplan::engine::testing
