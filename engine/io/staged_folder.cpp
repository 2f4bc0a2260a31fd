#include "engine/io/staged_folder.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace fs = std::filesystem;
namespace {

// PARENT/.NAME.spplan-KIND-PID: a sibling on the same file system, so renames are atomic.
std::string sibling(const std::string& dir, const char* kind) {
  const fs::path p = fs::path(dir).lexically_normal();
  const fs::path name = p.has_filename() ? p.filename() : p.parent_path().filename();
  const fs::path parent = p.has_filename() ? p.parent_path() : p.parent_path().parent_path();
  std::string leaf = ".";  // appended piece by piece: GCC 12 misreports "literal" + string (-Wrestrict)
  leaf += name.string();
  leaf += ".spplan-";
  leaf += kind;
  leaf += "-" + std::to_string(::getpid());
  return (parent / leaf).string();
}

std::string parent_of(const std::string& dir) {
  const fs::path p = fs::path(dir).lexically_normal();
  const fs::path parent = p.has_filename() ? p.parent_path() : p.parent_path().parent_path();
  return parent.empty() ? "." : parent.string();
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Every file of `dir` and the folder itself on disk before it takes its final name.
void fsync_folder(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) fsync_path(entry.path().string(), O_RDONLY);
  }
  fsync_path(dir, O_RDONLY | O_DIRECTORY);
}

Status failed(const std::string& flag, const std::string& path, const std::string& what, int error) {
  return Status::io_error(flag + ": " + printable(path) + ": " + what + " (" + std::strerror(error) + ")");
}

}  // namespace

StagedFolder::StagedFolder(std::string dir, std::string staged, std::string flag)
    : dir_(std::move(dir)), staged_(std::move(staged)), flag_(std::move(flag)) {}

StagedFolder::StagedFolder(StagedFolder&& other) noexcept
    : dir_(std::move(other.dir_)), staged_(std::move(other.staged_)), flag_(std::move(other.flag_)),
      committed_(other.committed_) {
  other.committed_ = true;  // the moved-from object removes nothing
}

StagedFolder::~StagedFolder() {
  if (committed_ || staged_.empty()) return;
  std::error_code ec;
  fs::remove_all(staged_, ec);
}

Result<StagedFolder> StagedFolder::begin(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  fs::create_directories(parent_of(dir), ec);
  const std::string staged = sibling(dir, "tmp");
  fs::remove_all(staged, ec);  // a leftover of an earlier process with this pid
  if (!fs::create_directory(staged, ec)) {
    return failed(flag, staged, "cannot create the folder the export is written into", ec.value());
  }
  return StagedFolder(dir, staged, flag);
}

Status StagedFolder::commit() {
  fsync_folder(staged_);
  std::error_code ec;
  if (look_at(dir_).kind == PathKind::kMissing) {
    if (::rename(staged_.c_str(), dir_.c_str()) != 0) return failed(flag_, dir_, "cannot rename into place", errno);
  } else if (::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staged_, ec);  // now the old folder
  } else {
    // No exchange on this file system: move the old folder aside whole, then the new one in.
    const std::string old = sibling(dir_, "old");
    fs::remove_all(old, ec);
    if (::rename(dir_.c_str(), old.c_str()) != 0) return failed(flag_, dir_, "cannot move the old folder aside", errno);
    if (::rename(staged_.c_str(), dir_.c_str()) != 0) {
      const int error = errno;
      ::rename(old.c_str(), dir_.c_str());  // put the old one back
      return failed(flag_, dir_, "cannot rename into place", error);
    }
    fs::remove_all(old, ec);
  }
  fsync_path(parent_of(dir_), O_RDONLY | O_DIRECTORY);
  committed_ = true;
  return Status::ok();
}

bool model_folder_entry(const std::string& name) {
  static const char* const kNames[] = {"config.json",           "generation_config.json", "model.safetensors",
                                       "model.safetensors.index.json", "tokenizer.json",  "tokenizer_config.json",
                                       "special_tokens_map.json", "tokenizer.model",      "vocab.json",
                                       "merges.txt",            "chat_template.jinja",    "added_tokens.json"};
  for (const char* known : kNames) {
    if (name == known) return true;
  }
  // The shards of a sharded save: model-00001-of-00004.safetensors.
  const std::string ending = ".safetensors";
  return name.rfind("model-", 0) == 0 && name.size() > ending.size() &&
         name.compare(name.size() - ending.size(), ending.size(), ending) == 0;
}

Status check_writable_folder(const std::string& dir, const std::string& flag) {
  const PathInfo info = look_at(dir);
  if (info.kind == PathKind::kUnusable) return Status::invalid(flag + ": " + printable(dir) + ": cannot open (" + info.why + ")");
  if (info.kind == PathKind::kFile || info.kind == PathKind::kOther) {
    return Status::invalid(flag + ": " + printable(dir) + ": a file (allowed: a folder, new or existing)");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (look_at(dir).kind != PathKind::kDirectory) {
    return Status::invalid(flag + ": " + printable(dir) + ": cannot create folder (" + ec.message() + ")");
  }
  const std::string probe = dir + "/.spplan-write-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::invalid(flag + ": " + printable(dir) + ": cannot write in it (" + std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::ok();
}

Status check_replaceable_model_folder(const std::string& dir, const std::string& flag) {
  const PathInfo info = look_at(dir);
  if (info.kind == PathKind::kDirectory) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!model_folder_entry(name)) {
        return Status::invalid(flag + ": " + printable(dir) + " holds \"" + printable(name) +
                               "\", which an export does not write (the folder is replaced whole; allowed: a new "
                               "folder, or one holding only a model's files)");
      }
    }
    if (ec) return Status::invalid(flag + ": " + printable(dir) + ": cannot list (" + ec.message() + ")");
  } else if (info.kind != PathKind::kMissing) {
    return check_writable_folder(dir, flag);  // says what is wrong with it
  }
  return check_writable_folder(parent_of(dir), flag);  // the staged sibling goes there
}

}  // namespace spplan::engine
