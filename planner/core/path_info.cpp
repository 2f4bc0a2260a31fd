#include "planner/core/path_info.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "planner/core/parse.hpp"

namespace spplan {

PathInfo look_at(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return {PathKind::kMissing, ""};
  std::error_code error;
  const fs::file_type type = fs::status(path, error).type();
  if (error && error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory) {
    return {PathKind::kUnusable, error.message()};
  }
  switch (type) {
    case fs::file_type::regular: return {PathKind::kFile, ""};
    case fs::file_type::directory: return {PathKind::kDirectory, ""};
    case fs::file_type::not_found:
    case fs::file_type::none: return {PathKind::kMissing, ""};
    default: return {PathKind::kOther, ""};
  }
}

Status check_readable_file(const std::string& path, const std::string& what) {
  const PathInfo info = look_at(path);
  // The path as typed, control characters escaped: a TOML string may hold a newline, and a message
  // is one line.
  const std::string head = what + printable(path) + ": cannot open (";
  switch (info.kind) {
    case PathKind::kMissing: return Status::invalid(head + "no such file)");
    case PathKind::kUnusable: return Status::invalid(head + info.why + ")");
    case PathKind::kDirectory: return Status::invalid(head + "a directory; allowed: a file)");
    // Devices and pipes would block or never end.
    case PathKind::kOther: return Status::invalid(head + "not a regular file; allowed: a file)");
    case PathKind::kFile: break;
  }
  if (::access(path.c_str(), R_OK) != 0) return Status::invalid(head + std::strerror(errno) + ")");
  return Status::ok();
}

Status check_folder(const std::string& path, const std::string& what, const std::string& allowed) {
  const PathInfo info = look_at(path);
  if (info.kind == PathKind::kDirectory) return Status::ok();
  const std::string shown = what + printable(path);  // one line, as check_readable_file's
  if (info.kind == PathKind::kUnusable) return Status::invalid(shown + ": cannot open (" + info.why + ")");
  const std::string found = info.kind == PathKind::kMissing ? "no such folder" : "not a folder";
  return Status::invalid(shown + ": " + found + " (allowed: " + allowed + ")");
}

}  // namespace spplan
