#include "planner/core/output_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "planner/core/parse.hpp"

namespace spplan {
namespace {

constexpr const char* kAllowed = "allowed: a regular file, a character device or a FIFO";

Status cannot_write(const std::string& path, const std::string& why) {
  return Status::io_error(printable(path) + ": cannot write (" + why + ")");
}

// The file a write to `path` lands in: `path`, or when it is a symbolic link the file it names,
// followed link by link as open() would. Renaming onto the link itself would replace the link
// with a plain file and leave the file it pointed to unchanged.
Result<std::string> write_target(const std::string& path) {
  namespace fs = std::filesystem;
  constexpr int kMaxLinks = 40;  // Linux's limit (SYMLOOP_MAX / ELOOP) for the same walk
  fs::path p = path;
  for (int hops = 0; hops < kMaxLinks; ++hops) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(p, error))) return p.string();
    const fs::path target = fs::read_symlink(p, error);
    if (error) return cannot_write(path, error.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return cannot_write(path, "more than " + std::to_string(kMaxLinks) +
                                " symbolic links in a row; allowed: a file or a link to one");
}

// Holds SIGPIPE back from this thread while it writes: a FIFO whose reader has gone makes write()
// fail with EPIPE *and* raise SIGPIPE, whose default action ends the program. The signal such a
// write raises is taken back (it is directed at the writing thread) before the old mask returns.
class SigpipeHeld {
 public:
  SigpipeHeld() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    held_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeHeld() {
    if (!held_) return;
    sigset_t pending;
    if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeHeld(const SigpipeHeld&) = delete;
  SigpipeHeld& operator=(const SigpipeHeld&) = delete;

 private:
  sigset_t pipe_{}, old_{};
  bool was_pending_ = false, held_ = false;
};

// All of `text` to `fd`, or "PATH: write failed (reason)".
Status write_all(int fd, const std::string& path, const std::string& text) {
  const SigpipeHeld held;
  size_t done_bytes = 0;
  while (done_bytes < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done_bytes, text.size() - done_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;  // a 0-byte write of a non-empty text: nothing more fits
      return Status::io_error(printable(path) + ": write failed (" + std::strerror(error) + ")");
    }
    done_bytes += static_cast<size_t>(n);
  }
  return Status::ok();
}

// A regular file or a new name: a temporary sibling, fsync, rename.
Status replace_atomically(const std::string& path, const std::string& target, const std::string& text) {
  const std::string tmp = target + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return cannot_write(path, std::strerror(errno));
  if (Status s = write_all(fd, path, text); !s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return cannot_write(path, std::strerror(error));
  }
  return Status::ok();
}

// A character device or a FIFO, which exists already: opened without O_CREAT or O_TRUNC, and
// without blocking. A FIFO's open for writing with O_NONBLOCK fails with ENXIO when no process has
// it open for reading (POSIX open(), "O_NONBLOCK"), where a blocking open would wait forever; once
// open, writes block again as a pipe's do, so the text is written whole.
Status write_in_place(const std::string& path, const std::string& target, const std::string& text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO) {
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
      return Status::invalid(printable(path) +
                             ": cannot write (a FIFO nobody reads; allowed: a regular file, or a FIFO with a reader)");
    }
  }
  if (fd < 0) return cannot_write(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {  // replaced by a file since it was looked at
    ::close(fd);
    return replace_atomically(path, target, text);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int error = errno;
    ::close(fd);
    return cannot_write(path, std::strerror(error));
  }
  Status s = write_all(fd, path, text);
  if (::close(fd) != 0 && s) s = cannot_write(path, std::strerror(errno));
  return s;
}

// The refusal of what `mode` is when nothing is written to it, or "" when it is written.
std::string refused_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";  // a disk: a text written there destroys what it holds
  if (S_ISSOCK(mode)) return "a socket";       // open() cannot open one (ENXIO)
  return "";
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& text) {
  if (path.empty()) return Status::invalid("\"\": cannot write (an empty file name; allowed: a path to a file)");
  SPPLAN_ASSIGN_OR_RETURN(const std::string target, write_target(path));
  struct stat st {};
  // A name that cannot be looked at (missing, too long, below a file) goes the atomic way, whose
  // open() says why it cannot be written.
  if (::stat(target.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return replace_atomically(path, target, text);
  if (const std::string kind = refused_kind(st.st_mode); !kind.empty()) {
    return Status::invalid(printable(path) + ": cannot write (" + kind + "; " + kAllowed + ")");
  }
  return write_in_place(path, target, text);
}

}  // namespace spplan
