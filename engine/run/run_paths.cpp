#include "engine/run/run_paths.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/io/staged_folder.hpp"
#include "planner/core/parse.hpp"
#include "planner/core/path_info.hpp"

namespace spplan::engine {
namespace {

// --log: an existing writable file, or a new name in a folder that can be made and written.
Status check_log_path(const std::string& path) {
  const PathInfo info = look_at(path);
  if (info.kind == PathKind::kFile) {
    if (::access(path.c_str(), W_OK) == 0) return Status::ok();
    return Status::invalid("--log: " + printable(path) + ": cannot write (" + std::strerror(errno) + ")");
  }
  if (info.kind != PathKind::kMissing) {
    const std::string why = info.kind == PathKind::kDirectory ? "a folder" : info.kind == PathKind::kUnusable ? info.why : "not a regular file";
    return Status::invalid("--log: " + printable(path) + ": " + why + " (allowed: a file path, new or existing)");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return check_writable_folder(parent.empty() ? "." : parent.string(), "--log");
}

}  // namespace

std::vector<NamedPath> run_inputs(const RunOptions& o) {
  std::vector<NamedPath> in = o.config_inputs;
  for (const std::string& p : o.data_paths) in.push_back({"--data", p, PathRole::kFile});
  for (const std::string& p : o.eval_paths) in.push_back({"--eval-data", p, PathRole::kFile});
  if (!o.init_from.empty()) in.push_back({"--init-from", o.init_from, PathRole::kFolder});
  const std::string resume = o.resume_or_init ? o.resume_or_init_dir : o.resume_dir;
  const std::string flag = o.resume_or_init ? "--resume-or-init" : "--resume";
  if (!resume.empty()) {
    // One ckpt-* folder named by hand is read whole; a --save folder only by its checkpoints.
    const bool one = look_at(resume + "/manifest.json").kind != PathKind::kMissing;
    in.push_back({flag, resume, one ? PathRole::kFolder : PathRole::kCheckpoints});
  }
  return in;
}

std::vector<NamedPath> run_outputs(const RunOptions& o) {
  std::vector<NamedPath> out;
  if (!o.log_path.empty()) out.push_back({"--log", o.log_path, PathRole::kFile});
  if (!o.save_dir.empty()) {
    const bool defaulted = o.resume_or_init && o.save_dir == o.resume_or_init_dir;
    out.push_back({defaulted ? "--resume-or-init" : "--save", o.save_dir, PathRole::kCheckpoints});
  }
  if (!o.export_hf.empty()) out.push_back({"--export-hf", o.export_hf, PathRole::kFolder});
  return out;
}

Status check_run_paths(const RunOptions& o) {
  SPPLAN_RETURN_IF_ERROR(check_outputs_apart(run_inputs(o), run_outputs(o)));
  if (!o.save_dir.empty()) SPPLAN_RETURN_IF_ERROR(check_writable_folder(o.save_dir, "--save"));
  if (!o.export_hf.empty()) SPPLAN_RETURN_IF_ERROR(check_replaceable_model_folder(o.export_hf, "--export-hf"));
  if (!o.log_path.empty()) SPPLAN_RETURN_IF_ERROR(check_log_path(o.log_path));
  return Status::ok();
}

}  // namespace spplan::engine
