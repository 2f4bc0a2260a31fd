#include "planner/core/path_guard.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <utility>
#include <system_error>

#include "planner/core/parse.hpp"

namespace spplan {
namespace fs = std::filesystem;
namespace {

// The names a checkpoint folder's writer owns (checkpoint_io.hpp): LATEST, ckpt-NNNNNN, and the
// temporary folders it renames into place.
bool checkpoint_entry(const std::string& name) {
  return name == "LATEST" || name.rfind("ckpt-", 0) == 0 || name.rfind(".tmp-", 0) == 0;
}

// The first component of `child` below `parent`, or nullopt when `child` is not strictly inside it.
std::optional<std::string> entry_below(const fs::path& child, const fs::path& parent) {
  auto c = child.begin();
  for (auto p = parent.begin(); p != parent.end(); ++p, ++c) {
    if (p->empty()) continue;  // a trailing separator's empty last element
    if (c == child.end() || *c != *p) return std::nullopt;
  }
  while (c != child.end() && c->empty()) ++c;
  if (c == child.end()) return std::nullopt;
  return c->string();
}

// Hard links: one file under two names.
bool same_inode(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Two writes to one character device (/dev/null, a terminal) are two writes, not one file
// replacing another: outputs there need not be apart.
bool character_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

std::string kind_word(PathRole role) { return role == PathRole::kFile ? "file" : "folder"; }

// Why writing `out` would touch `in` (a path read, or another output), or "" when it would not.
std::string overlap(const NamedPath& out, const NamedPath& in) {
  const fs::path o = resolved_path(out.path), i = resolved_path(in.path);
  const std::string named = "the " + in.flag + " " + kind_word(in.role) + " " + printable(in.path);
  if (o == i || same_inode(out.path, in.path)) {
    // --save continuing the --resume folder adds checkpoints beside the one it read.
    if (out.role == PathRole::kCheckpoints && in.role == PathRole::kCheckpoints) return "";
    return "is " + named;
  }
  if (const auto entry = entry_below(o, i)) {
    if (in.role == PathRole::kCheckpoints && !checkpoint_entry(*entry)) return "";
    return "lies inside " + named;
  }
  if (const auto entry = entry_below(i, o)) {
    if (out.role == PathRole::kCheckpoints && !checkpoint_entry(*entry)) return "";
    return "holds " + named;
  }
  return "";
}

}  // namespace

std::string resolved_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) p = fs::path(path);
  const fs::path canonical = fs::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : canonical).string();
}

Status check_outputs_apart(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const NamedPath& out = outputs[k];
    if (out.path.empty()) continue;  // "" names no file: its flag's own check refuses it
    for (const NamedPath& in : inputs) {
      if (in.path.empty()) continue;  // a preset name, not a file
      if (const std::string why = overlap(out, in); !why.empty()) {
        return Status::invalid(out.flag + ": " + printable(out.path) + " " + why +
                               " (an input is never written; allowed: a path apart from every input)");
      }
    }
    for (size_t j = 0; j < k; ++j) {
      if (outputs[j].path.empty()) continue;
      if (character_device(out.path) && character_device(outputs[j].path)) continue;
      // Named from the one that is inside (or is) the other: "--log: out/run.jsonl lies inside ...".
      const NamedPath* first = &out;
      const NamedPath* second = &outputs[j];
      std::string why = overlap(*first, *second);
      const std::string other = overlap(*second, *first);
      if (why.empty() || (why.rfind("holds", 0) == 0 && !other.empty())) {
        std::swap(first, second);
        why = other;
      }
      if (!why.empty()) {
        return Status::invalid(first->flag + ": " + printable(first->path) + " " + why +
                               " (one output would overwrite the other; allowed: paths apart from each other)");
      }
    }
  }
  return Status::ok();
}

}  // namespace spplan
