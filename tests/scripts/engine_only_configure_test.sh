#!/usr/bin/env bash
# Configures SPPLAN_ENGINE_ONLY=ON in a temporary folder as a GPU node would (BUILD-NOTES.md
# section 9): with Qt, Boost, GoogleTest, Google Benchmark and fmt hidden from CMake, and then with
# toml++, nlohmann-json and Eigen hidden too, taken from a folder scripts/bundle-headers.sh wrote
# (with GoogleTest's sources, for the engine's unit tests). Configure only (no build), to keep CI short. Exits 77 (skipped) when there is no torch.
#
# Usage: engine_only_configure_test.sh SOURCE_DIR [CMAKE] [GENERATOR]
set -uo pipefail
src=$(cd "$1" && pwd)
cmake=${2:-cmake}
generator=${3:-Ninja}
. "$src/scripts/lib/torch-python.sh"
if ! spplan_find_torch; then
  echo "SKIP: $SPPLAN_TORCH_WHY"
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

hidden=()
for p in Qt6 Boost GTest benchmark fmt; do hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_$p=ON"); done
hidden_headers=(-DCMAKE_DISABLE_FIND_PACKAGE_tomlplusplus=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
                -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON)

# configure NAME ARGS...: configures into $tmp/NAME, output in $tmp/NAME.log; returns cmake's status.
configure() {
  local name=$1; shift
  "$cmake" -S "$src" -B "$tmp/$name" -G "$generator" --no-warn-unused-cli -DSPPLAN_ENGINE_ONLY=ON \
    -DCMAKE_PREFIX_PATH="$SPPLAN_TORCH_PREFIX" "${hidden[@]}" "$@" >"$tmp/$name.log" 2>&1
}
# The engine-only target set: the engine and the CLI, and nothing that needs a hidden package.
check_targets() {
  local ninja=$tmp/$1/build.ninja
  for t in spplan-engine spplan spplan_config spplan_costmodel; do
    grep -q "^build $t:" "$ninja" || fail "$1: no target $t"
  done
  for t in spplan_simulator spplan-gui spplan_gui_lib test_cli engine_tests bench_planner; do
    grep -q "^build $t:" "$ninja" && fail "$1: target $t is built but needs a package a GPU node lacks"
  done
  return 0
}

# 1. The system's toml++, nlohmann-json and Eigen, everything else hidden: no GoogleTest anywhere,
# so the GPU checks are the kernel bench alone, and configure says why.
mkdir -p "$tmp/empty"
if configure system -DSPPLAN_BUNDLE_DIR="$tmp/empty"; then
  check_targets system
  grep -q "^build engine_tiling_unit_tests:" "$tmp/system/build.ninja" && fail "system: unit tests built without GoogleTest"
  grep -q "engine_tiling_unit_tests not built" "$tmp/system.log" || fail "system: configure does not say the unit tests are not built"
else
  fail "configure with the system's header libraries:"; tail -n 20 "$tmp/system.log"
fi

# 2. Only the bundle: the compile lines must use its include folder and header-only toml++.
"$src/scripts/bundle-headers.sh" "$tmp/bundle" >/dev/null || fail "bundle-headers.sh failed"
if configure bundle "${hidden_headers[@]}" -DSPPLAN_BUNDLE_DIR="$tmp/bundle"; then
  check_targets bundle
  grep -q "toml++ from bundle $tmp/bundle/include" "$tmp/bundle.log" || fail "bundle: toml++ not taken from the bundle"
  grep -q "Eigen from bundle $tmp/bundle/include" "$tmp/bundle.log" || fail "bundle: Eigen not taken from the bundle"
  cc=$tmp/bundle/compile_commands.json
  grep "toml_reader.cpp" "$cc" | grep -q -- "-isystem $tmp/bundle/include" || fail "bundle: toml_reader.cpp does not include the bundle"
  grep "toml_reader.cpp" "$cc" | grep -q -- "-DTOML_HEADER_ONLY=1" || fail "bundle: toml++ is not header-only"
  grep "kernel_fit.cpp" "$cc" | grep -q -- "-isystem $tmp/bundle/include" || fail "bundle: kernel_fit.cpp does not include the bundle (Eigen)"
  grep -q "libtomlplusplus" "$tmp/bundle/build.ninja" && fail "bundle: still links the system's libtomlplusplus"
  # The GPU node's kernel checks: the LibTorch unit tests (FusedCuda.*) on the bundled GoogleTest.
  grep -q "^build engine_tiling_unit_tests:" "$tmp/bundle/build.ninja" || fail "bundle: no engine_tiling_unit_tests"
  grep "gtest-all.cc" "$tmp/bundle/compile_commands.json" | grep -q "$tmp/bundle/googletest" ||
    fail "bundle: GoogleTest not compiled from the bundled sources"
else
  fail "configure with the bundled header libraries:"; tail -n 20 "$tmp/bundle.log"
fi

# 3. Neither: configure must stop and say what to do.
if configure none "${hidden_headers[@]}" -DSPPLAN_BUNDLE_DIR="$tmp/empty"; then
  fail "configure succeeded without toml++ anywhere"
else
  grep -q "toml++: not found on this system" "$tmp/none.log" || fail "no toml++: message missing"
  grep -q "bundle-headers.sh" "$tmp/none.log" || fail "no toml++: the message does not name bundle-headers.sh"
fi

[ "$failures" -eq 0 ] && echo "engine-only configure: 3 cases passed (torch $SPPLAN_TORCH_VERSION)"
[ "$failures" -eq 0 ]
