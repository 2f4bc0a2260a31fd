// Writing a file a user named as an output (--out, --trace, --svg, a checkpoint's LATEST): the one
// writer every command and the GUI go through, so that what a path names decides how it is written.
//
//   a regular file, or a name that does not exist yet
//       written to a temporary sibling, flushed to disk and renamed over the name: a reader sees the
//       old text or the new, never half of one. A symbolic link is followed to the file it names
//       (the link stays a link).
//   a character device (/dev/null, /dev/stdout's terminal) or a FIFO
//       opened and written in place: never created, truncated or replaced by a rename (renaming a
//       regular file over /dev/null, run as root, takes the machine's null device away). A FIFO
//       nobody reads is refused at once rather than blocking the command forever.
//   a block device, a directory or a socket
//       refused: none of them is somewhere a text belongs (a socket cannot be open()ed).
//
// Every failure is one line naming the path and the reason, e.g.
//   "out.toml: write failed (No space left on device)".
// Never throws and never raises SIGPIPE (a FIFO whose reader went away is an error, not a death).
#pragma once

#include <string>

#include "planner/core/status.hpp"

namespace spplan {

// Writes `text` to `path` as above. Ok, or kInvalidInput for an empty path or a kind of file that
// is refused, kIoError when the system refuses the write (its reason in parentheses).
// The name says what happens to a regular file, the common case; a device or a FIFO is written in
// place (see above).
Status write_file_atomically(const std::string& path, const std::string& text);

}  // namespace spplan
