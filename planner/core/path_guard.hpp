// No input is ever an output. A command that reads some paths and writes others (a run reads
// --data, --init-from, --resume and the plan; writes --log, --save, --export-hf) hands both lists
// here before it writes anything; a pair that would make a write land on something read is
// refused with one line naming both flags and both paths.
//
// Paths are compared after resolving them as the kernel would (symbolic links, "..", "."; a name
// that does not exist yet is resolved through its longest existing parent), and existing files
// also by device and inode, so a hard link to the corpus is the corpus.
//
// What each path is decides which relations are unsafe:
//   kFile          a file: an output may not be it.
//   kFolder        a folder read (or written) whole: an output may not be it, lie inside it or
//                  hold it (an export replaces its whole folder: staged_folder.hpp).
//   kCheckpoints   a --save / --resume folder, of which only LATEST, ckpt-* and .tmp-* belong to
//                  the checkpoints (checkpoint_io.hpp): a --log beside them is fine, a --log
//                  named LATEST is not, and --save may be the --resume folder it continues.
#pragma once

#include <string>
#include <vector>

#include "planner/core/status.hpp"

namespace spplan {

enum class PathRole { kFile, kFolder, kCheckpoints };

struct NamedPath {
  std::string flag;  // "--data", "--init-from", "plan.toml: key \"model\""
  std::string path;  // as the user gave it
  PathRole role = PathRole::kFile;
};

// `path` absolute and resolved: links followed as far as the path exists, "." and ".." removed.
// A path the system cannot resolve at all comes back made absolute only.
std::string resolved_path(const std::string& path);

// Ok when no output is, lies inside or (for a folder output) holds an input, and no output is,
// lies inside or holds another (an empty path names nothing and is skipped; two outputs on one
// character device, such as /dev/null, are allowed); else one line: "--log: data/train.bin is the
// --data file data/train.bin (an input is never written; allowed: a path apart from every input)",
// "--svg: a.out is the --trace file a.out (one output would overwrite the other; ...)".
Status check_outputs_apart(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

}  // namespace spplan
