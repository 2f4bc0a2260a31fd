// spplan: plan, simulate and run Ulysses sequence-parallel training (DESIGN.md command contract).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/common.hpp"

namespace {

using spplan::cli::kExitBadInput;
using spplan::cli::kExitInternal;

// A command's answer is what it printed: an answer that could not be written (a full disk, a
// closed descriptor) is a failure, though the command itself finished. Checked here, where every
// command of the executable returns, and not in run_command, which the Python module and the fuzz
// target call with std::cout captured and a stdout of their own.
int with_stdout_written(int code) {
  errno = 0;
  std::cout.flush();  // through stdio's stdout (synced with it): a failure here empties its buffer
  bool written = std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && !std::cout.fail();
  int error = errno;
  // Closing is the last write that can fail: a file system may report a lost write only at close
  // (close(2), NOTES).
  if (written && std::fclose(stdout) != 0) {
    written = false;
    error = errno;
  }
  if (written || code == kExitBadInput || code == kExitInternal) return code;  // a failure's line says why
  // A failed write whose errno later calls overwrote (a large print fails at once, the rest is
  // never tried): a write of nothing asks the file again, and a full device still says ENOSPC.
  if (error == 0 && ::write(STDOUT_FILENO, "", 0) < 0) error = errno;
  const std::string why = error != 0 ? std::strerror(error) : "an earlier write to it failed";
  return spplan::cli::fail(spplan::Status::io_error("standard output: write failed (" + why + ")"));
}

}  // namespace

int main(int argc, char** argv) { return with_stdout_written(spplan::cli::run_command(argc, argv)); }
