#!/usr/bin/env bash
# Copies the header-only libraries of the engine-only build (toml++, nlohmann-json, Eigen) from this
# machine's include folder into DIR (default third_party_bundle/, git-ignored), with their
# copyright files. A GPU node has no -dev packages and no registry (BUILD-NOTES.md section 9):
# run this where the packages are (scripts/install-deps.sh puts them there), bring DIR along with
# the source tree, and CMake (cmake/header_deps.cmake) uses it for whatever the node lacks.
#
# Usage: scripts/bundle-headers.sh [DIR]
# Env:   SPPLAN_HEADERS_FROM (default /usr/include): where to copy the headers from.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-third_party_bundle}
from=${SPPLAN_HEADERS_FROM:-/usr/include}

# folder under $from | folder under DIR/include | Debian package (named in the error message; its
# copyright file). Eigen's package puts Eigen/ under eigen3/; the bundle keeps only Eigen/ (MPL-2.0
# headers), not eigen3/unsupported/, which spplan does not use.
libs=("toml++|toml++|libtomlplusplus-dev" "nlohmann|nlohmann|nlohmann-json3-dev" "eigen3/Eigen|Eigen|libeigen3-dev")

for lib in "${libs[@]}"; do
  dir=${lib%%|*} pkg=${lib##*|}
  if [ ! -d "$from/$dir" ]; then
    echo "bundle-headers: $from/$dir: does not exist (install $pkg, or set SPPLAN_HEADERS_FROM)" >&2
    exit 2
  fi
done

mkdir -p "$dest/include" "$dest/licenses"
for lib in "${libs[@]}"; do
  dir=${lib%%|*} pkg=${lib##*|} name=${lib#*|}
  name=${name%%|*}
  # Replace, not merge: a stale file from an older version must not survive a refresh.
  rm -rf "${dest:?}/include/$name"
  cp -R "$from/$dir" "$dest/include/$name"
  if [ -f "/usr/share/doc/$pkg/copyright" ]; then
    cp "/usr/share/doc/$pkg/copyright" "$dest/licenses/$pkg.copyright"
  fi
done

# GoogleTest's sources (Debian's googletest package): the engine-only build compiles them for the
# engine's LibTorch unit tests, the fused CUDA kernels' tests among them (cmake/engine_only_checks.cmake).
gtest_from=${SPPLAN_GTEST_FROM:-/usr/src/googletest}
rm -rf "${dest:?}/googletest"
if [ -f "$gtest_from/CMakeLists.txt" ]; then
  cp -R "$gtest_from" "$dest/googletest"
  [ -f /usr/share/doc/googletest/copyright ] && cp /usr/share/doc/googletest/copyright "$dest/licenses/googletest.copyright"
  gtest_v=$(sed -n 's/.*GOOGLETEST_VERSION \([0-9.]*\).*/\1/p' "$gtest_from/CMakeLists.txt" | head -n1)
else
  echo "bundle-headers: $gtest_from: no GoogleTest sources (install googletest, or set SPPLAN_GTEST_FROM);" \
    "the bundle builds without the engine's unit tests" >&2
  gtest_v="not bundled"
fi

# Reads "#define NAME n" from a header, for the record below.
define_of() { sed -n "s/^#[[:space:]]*define[[:space:]]\{1,\}$2[[:space:]]\{1,\}\([0-9]\{1,\}\).*/\1/p" "$1" | head -n1; }
toml_v="$(define_of "$dest/include/toml++/impl/version.h" TOML_LIB_MAJOR).$(define_of "$dest/include/toml++/impl/version.h" TOML_LIB_MINOR)"
json_h="$dest/include/nlohmann/detail/abi_macros.hpp"
[ -f "$json_h" ] || json_h="$dest/include/nlohmann/json.hpp"
json_v="$(define_of "$json_h" NLOHMANN_JSON_VERSION_MAJOR).$(define_of "$json_h" NLOHMANN_JSON_VERSION_MINOR)"
eigen_h="$dest/include/Eigen/src/Core/util/Macros.h"
eigen_v="$(define_of "$eigen_h" EIGEN_WORLD_VERSION).$(define_of "$eigen_h" EIGEN_MAJOR_VERSION).$(define_of "$eigen_h" EIGEN_MINOR_VERSION)"
printf 'toml++ %s\nnlohmann-json %s\nEigen %s\nGoogleTest %s\nfrom %s\n' "$toml_v" "$json_v" "$eigen_v" "$gtest_v" "$from" > "$dest/VERSIONS"
echo "bundle-headers: toml++ $toml_v, nlohmann-json $json_v, Eigen $eigen_v and GoogleTest $gtest_v copied to $dest ($(du -sh "$dest" | cut -f1))"
