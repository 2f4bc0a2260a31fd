// Runs the built `spplan` as a script would and returns its exit code, stdout and stderr: shared
// by the CLI tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace spplan::cli_test {

struct CliRun {
  int exit_code;  // 128 + N when killed by signal N (an abort shows as 134)
  std::string out, err;
};

// `env`: "NAME=value ..." for the command's environment.
inline CliRun run_spplan(const std::string& args, const std::string& env = "") {
  // ctest runs each case as its own process, in parallel: one stderr file per process.
  const std::string err_path = testing::TempDir() + "/spplan_err." + std::to_string(getpid()) + ".txt";
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(SPPLAN_BINARY_DIR) + "/spplan " + args +
                          " 2>" + err_path;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  std::string err;
  if (FILE* f = fopen(err_path.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) err.append(buf.data(), n);
    fclose(f);
  }
  std::remove(err_path.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out, err};
}

}  // namespace spplan::cli_test
