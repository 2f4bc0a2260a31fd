// What a user-given path names, asked without throwing. std::filesystem's throwing overloads
// (exists, is_regular_file, is_directory without an error_code) abort the program when a name is
// too long, a link loops or a folder is not searchable; every place a user's string becomes a path
// asks here instead, so that such a path is bad input with one line, never a crash.
#pragma once

#include <string>

#include "planner/core/status.hpp"

namespace spplan {

enum class PathKind { kMissing, kFile, kDirectory, kOther, kUnusable };

struct PathInfo {
  PathKind kind = PathKind::kMissing;
  std::string why;  // kUnusable: the system's reason ("File name too long"); else empty
};

// Follows symbolic links as open() would. A missing name (ENOENT, ENOTDIR) is kMissing; any other
// failure to look (ENAMETOOLONG, ELOOP, EACCES) is kUnusable with its reason.
PathInfo look_at(const std::string& path);

// Ok when `path` is a readable regular file; else one line naming the path and what is wrong:
// "PATH: cannot open (no such file)", "(File name too long)", "(a directory; allowed: a file)".
// `what` ("--data: ") prefixes the message when not empty.
Status check_readable_file(const std::string& path, const std::string& what = "");

// Ok when `path` is a folder; else "PATH: no such folder (allowed: ALLOWED)" or the system's
// reason, prefixed by `what`.
Status check_folder(const std::string& path, const std::string& what, const std::string& allowed);

}  // namespace spplan
