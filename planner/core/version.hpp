// The version `spplan --version`, `spplan-engine --version`, `spplan-gui --version` and the Python
// package print: the project's version (CMakeLists.txt) and the git commit it was configured from.
#pragma once

#include <string>
#include <string_view>

namespace spplan {

// "0.1.0"
std::string_view version();
// A 12-digit abbreviated commit hash, or "unknown" when the tree was not a git checkout.
std::string_view commit();
// "spplan 0.1.0 (commit 0123456789ab)"; "(commit unknown: not built from a git checkout)".
std::string version_line(std::string_view program);

}  // namespace spplan
