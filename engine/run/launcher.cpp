#include "engine/run/launcher.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "planner/core/parse.hpp"

namespace spplan::engine {
namespace {

constexpr const char* kChildVar = "SPPLAN_ENGINE_CHILD";
constexpr const char* kOomFileVar = "SPPLAN_ENGINE_OOM_FILE";
constexpr auto kGrace = std::chrono::seconds(5);  // SIGTERM -> SIGKILL

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

Result<int64_t> env_int(const char* name, int64_t min, int64_t max) {
  return parse_int(std::string("environment variable ") + name, env(name), min, max);
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 29500;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

namespace {

[[noreturn]] void exec_rank(int64_t rank, int64_t nproc, int port, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
  const std::string r = std::to_string(rank), w = std::to_string(nproc), p = std::to_string(port);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", w.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", w.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", p.c_str(), 1);
  ::setenv(kChildVar, "1", 1);
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "spplan-engine: cannot start rank %s (%s)\n", r.c_str(), std::strerror(errno));
  ::_exit(1);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("was killed by signal ") + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

// Stops every rank still running: SIGTERM, then SIGKILL for those alive after the grace period.
void stop_all(std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    if (pid > 0) ::kill(pid, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + kGrace;
  for (pid_t& pid : pids) {
    while (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid = -1;
  }
}

// A temp file (in $TMPDIR, else /tmp) the ranks append their out-of-memory objects to; removed
// by its destructor.
class OomFile {
 public:
  OomFile() {
    const char* dir = env("TMPDIR");
    std::string tmpl = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/spplan-oom-XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) return;
    ::close(fd);
    path_ = tmpl;
    ::setenv(kOomFileVar, tmpl.c_str(), 1);
  }
  ~OomFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  // The first line written, or "".
  std::string first_line() const {
    std::string line;
    if (FILE* f = path_.empty() ? nullptr : std::fopen(path_.c_str(), "r")) {
      char buf[4096];
      if (std::fgets(buf, sizeof buf, f) != nullptr) line = buf;
      std::fclose(f);
    }
    return line;
  }

 private:
  std::string path_;
};

// SIGTERM or SIGINT to the launcher (the GUI's stop button, a job scheduler, Ctrl+C): noted here,
// acted on by the wait loop, which stops the ranks and returns so the temp file is removed.
volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_stop_count = 0;
extern "C" void note_stop_signal(int sig) {
  g_stop_signal = sig;
  g_stop_count = g_stop_count + 1;
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = note_stop_signal;  // no SA_RESTART: waitpid returns EINTR
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
}

// The next rank to end, or -1 once a stop signal beyond the `seen` ones arrived.
pid_t wait_for_a_rank(int* status, int seen) {
  while (g_stop_count == seen) {
    const pid_t pid = ::waitpid(-1, status, WNOHANG);
    if (pid != 0) return pid;
    // Polled, not blocking: a signal landing just before a blocking wait would be missed.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

}  // namespace

bool append_oom_report(const std::string& json_line) {
  const char* path = is_launched_child() ? env(kOomFileVar) : nullptr;
  if (path == nullptr) return false;
  // One write(2) of a line under O_APPEND: lines from ranks failing at once never interleave.
  const int fd = ::open(path, O_WRONLY | O_APPEND);
  if (fd < 0) return false;
  const std::string line = json_line + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  return ok;
}

bool is_launched_child() { return env(kChildVar) != nullptr; }

Result<std::optional<DistEnv>> read_dist_env() {
  const bool torchrun = env("RANK") != nullptr;
  if (!torchrun && env("SLURM_PROCID") == nullptr) return std::optional<DistEnv>{};
  DistEnv d;
  SPPLAN_ASSIGN_OR_RETURN(d.rank, env_int(torchrun ? "RANK" : "SLURM_PROCID", 0, 1 << 20));
  const char* world_var = torchrun ? "WORLD_SIZE" : "SLURM_NTASKS";
  if (env(world_var) == nullptr) return Status::invalid(std::string(world_var) + ": missing (required with RANK)");
  SPPLAN_ASSIGN_OR_RETURN(d.world, env_int(world_var, d.rank + 1, 1 << 20));
  const char* local_var = torchrun ? "LOCAL_RANK" : "SLURM_LOCALID";
  if (env(local_var) != nullptr) {
    SPPLAN_ASSIGN_OR_RETURN(d.local_rank, env_int(local_var, 0, 1 << 20));
  }
  if (d.world > 1) {
    if (env("MASTER_ADDR") == nullptr || env("MASTER_PORT") == nullptr) {
      return Status::invalid("MASTER_ADDR/MASTER_PORT: missing (required when WORLD_SIZE > 1)");
    }
    d.master_addr = env("MASTER_ADDR");
    SPPLAN_ASSIGN_OR_RETURN(const int64_t port, env_int("MASTER_PORT", 1, 65535));
    d.master_port = static_cast<int>(port);
  }
  return std::optional<DistEnv>{d};
}

int launch_local(int64_t nproc, int /*argc*/, char** argv) {
  const int port = free_port();
  const OomFile oom_file;
  catch_stop_signals();  // after fork+exec the ranks get the default dispositions back
  std::vector<pid_t> pids(static_cast<size_t>(nproc), -1);
  for (int64_t r = 0; r < nproc; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) exec_rank(r, nproc, port, argv);
    if (pid < 0) {
      std::fprintf(stderr, "spplan-engine: fork failed for rank %lld (%s)\n", static_cast<long long>(r), std::strerror(errno));
      stop_all(pids);
      return 1;
    }
    pids[static_cast<size_t>(r)] = pid;
  }
  // The first stop signal is passed on to the ranks, which finish their step, save and report
  // (signals.hpp); a second one stops them at once.
  int seen = 0;
  for (int64_t alive = nproc; alive > 0; --alive) {
    int status = 0;
    const pid_t pid = wait_for_a_rank(&status, seen);
    if (pid < 0 && g_stop_count > seen) {
      const int sig = g_stop_signal;
      if (seen++ == 0) {
        std::fprintf(stderr, "spplan-engine: signal %d (%s): the ranks finish their step, then save and report "
                     "(a second signal stops them at once)\n", sig, ::strsignal(sig));
        for (pid_t p : pids) {
          if (p > 0) ::kill(p, sig);
        }
        ++alive;
        continue;
      }
      std::fprintf(stderr, "spplan-engine: stopped by signal %d (%s); stopping %lld running rank(s)\n", sig,
                   ::strsignal(sig), static_cast<long long>(alive));
      stop_all(pids);
      return 128 + sig;  // the shell's convention for a command ended by a signal
    }
    if (pid < 0) break;
    size_t rank = 0;
    while (rank < pids.size() && pids[rank] != pid) ++rank;
    if (rank == pids.size()) { ++alive; continue; }
    pids[rank] = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    if (seen > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 128 + g_stop_signal) continue;  // stopped as asked
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitOutOfMemory) {  // the rank said so itself
      stop_all(pids);
      std::fputs(oom_file.first_line().c_str(), stdout);
      std::fflush(stdout);
      return kExitOutOfMemory;
    }
    const int running = static_cast<int>(alive - 1);
    std::fprintf(stderr, "spplan-engine: rank %zu (pid %d) %s; stopping the other %d running rank(s)\n", rank, pid,
                 describe(status).c_str(), running);
    stop_all(pids);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return seen > 0 ? 128 + g_stop_signal : 0;
}

}  // namespace spplan::engine
