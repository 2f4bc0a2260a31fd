#!/usr/bin/env bash
# Which torch scripts/build.sh and scripts/install-deps.sh settle on (scripts/lib/torch-python.sh),
# and which packages install-deps.sh asks for on Debian / Ubuntu with SPPLAN_NO_GUI and
# SPPLAN_ENGINE_ONLY. Fake interpreters stand in for Pythons with and without torch, so the test
# takes a second and needs no wheel. Nothing is built and nothing installed (--print-torch, --dry-run).
#
# Usage: torch_choice_test.sh SOURCE_DIR
set -uo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# A fake python that "imports torch": prints a version and a CMake prefix naming itself.
fake_torch() { mkdir -p "$(dirname "$1")"; printf '#!/bin/sh\necho 9.9.9+fake\necho /prefix/%s\n' "$2" >"$1"; chmod +x "$1"; }
# A fake python without torch.
fake_bare() { mkdir -p "$(dirname "$1")"; printf '#!/bin/sh\necho "No module named torch" >&2\nexit 1\n' >"$1"; chmod +x "$1"; }

fake_torch "$tmp/explicit/python" explicit
fake_bare "$tmp/bare/python"
fake_torch "$tmp/venv/bin/python" venv
fake_bare "$tmp/bare-venv/bin/python"
fake_torch "$tmp/path-torch/python3" path
fake_bare "$tmp/path-bare/python3"
printf 'ID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n' >"$tmp/ubuntu-24.04"
printf 'ID=debian\nVERSION_ID="12"\n' >"$tmp/debian-12"
printf 'ID=fedora\nVERSION_ID="40"\n' >"$tmp/fedora-40"

# check NAME EXPECTED_RC OUTPUT_REGEX [NOT_REGEX] -- ENV... COMMAND...: runs COMMAND with ENV
# (and with SPPLAN_* unset otherwise, the venv pointing nowhere so that this machine's real torch
# is never asked), then checks its status and combined output.
check() {
  local name=$1 want_rc=$2 want=$3 not=$4; shift 5
  local out rc
  out=$(env -u SPPLAN_TORCH_PYTHON -u SPPLAN_VENV -u SPPLAN_ENGINE_ONLY -u SPPLAN_NO_GUI \
          -u SPPLAN_SKIP_TORCH -u SPPLAN_BUILD_ENGINE SPPLAN_VENV="$tmp/nowhere" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -Eq -- "$want" <<<"$out" || { [ -n "$not" ] && grep -Eq -- "$not" <<<"$out"; }; then
    echo "FAIL $name: status $rc (want $want_rc), output:"; sed 's/^/  | /' <<<"$out"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}
build="$src/scripts/build.sh"
deps="$src/scripts/install-deps.sh"
P="PATH=$tmp/path-torch:$PATH"     # the active python3 has torch
B="PATH=$tmp/path-bare:$PATH"      # the active python3 has none

# build.sh --print-torch: SPPLAN_TORCH_PYTHON, then the venv, then the active python3.
check explicit-wins 0 "python=$tmp/explicit/python" "" -- "$P" SPPLAN_TORCH_PYTHON="$tmp/explicit/python" SPPLAN_VENV="$tmp/venv" "$build" --print-torch
check explicit-prefix 0 "cmake_prefix=/prefix/explicit" "" -- "$P" SPPLAN_TORCH_PYTHON="$tmp/explicit/python" "$build" --print-torch
check explicit-bad-is-error 2 "SPPLAN_TORCH_PYTHON=$tmp/bare/python: cannot import torch" "python=" -- "$P" SPPLAN_TORCH_PYTHON="$tmp/bare/python" "$build" --print-torch
check venv-before-active 0 "python=$tmp/venv/bin/python" "" -- "$P" SPPLAN_VENV="$tmp/venv" "$build" --print-torch
check active-when-no-venv 0 "python=$tmp/path-torch/python3" "" -- "$P" SPPLAN_VENV="$tmp/nowhere" "$build" --print-torch
check active-when-venv-bare 0 "python=$tmp/path-torch/python3" "" -- "$P" SPPLAN_VENV="$tmp/bare-venv" "$build" --print-torch
check none 1 "no torch in $tmp/bare-venv/bin/python nor in the active python3" "python=" -- "$B" SPPLAN_VENV="$tmp/bare-venv" "$build" --print-torch
check engine-only-needs-torch 2 "SPPLAN_ENGINE_ONLY=1 needs torch" "" -- "$B" SPPLAN_VENV="$tmp/bare-venv" SPPLAN_ENGINE_ONLY=1 "$build"
check engine-only-vs-engine-off 2 "contradicts SPPLAN_BUILD_ENGINE=OFF" "" -- "$P" SPPLAN_ENGINE_ONLY=1 SPPLAN_BUILD_ENGINE=OFF "$build"
check build-bad-argument 2 "unknown argument '--bogus'" "" -- "$P" "$build" --bogus

# install-deps.sh --dry-run: the packages per system and option, and torch reused or installed.
O=SPPLAN_OS_RELEASE
check deps-ubuntu 0 "system: ubuntu 24.04" "" -- "$P" $O="$tmp/ubuntu-24.04" "$deps" --dry-run
check deps-full-has-gui 0 "wanted: .*libboost-graph-dev.* qt6-base-dev>=6.4 .*xvfb" "" -- "$P" $O="$tmp/debian-12" "$deps" --dry-run
check deps-sanitizers 0 "wanted: .*clang libclang-rt-dev" "" -- "$P" $O="$tmp/debian-12" "$deps" --dry-run
check deps-no-gui 0 "wanted: .*libboost-graph-dev.*libgtest-dev" "qt6|xvfb" -- "$P" $O="$tmp/ubuntu-24.04" SPPLAN_NO_GUI=1 "$deps" --dry-run
check deps-engine-only 0 "wanted: build-essential cmake>=3.25 ninja-build git libtomlplusplus-dev nlohmann-json3-dev>=3.11 libeigen3-dev>=3.3$" "boost|gtest|benchmark|qt6|xvfb|fmt|clang" -- "$P" $O="$tmp/ubuntu-24.04" SPPLAN_ENGINE_ONLY=1 "$deps" --dry-run
check deps-reuses-active-torch 0 "torch: 9.9.9\+fake present in $tmp/path-torch/python3; not installing another" "will install" -- "$P" $O="$tmp/ubuntu-24.04" SPPLAN_VENV="$tmp/nowhere" "$deps" --dry-run
check deps-reuses-explicit-torch 0 "present in $tmp/explicit/python" "will install" -- "$B" $O="$tmp/ubuntu-24.04" SPPLAN_TORCH_PYTHON="$tmp/explicit/python" "$deps" --dry-run
check deps-explicit-bad-is-error 2 "SPPLAN_TORCH_PYTHON=$tmp/bare/python: cannot import torch" "will install" -- "$B" $O="$tmp/ubuntu-24.04" SPPLAN_TORCH_PYTHON="$tmp/bare/python" "$deps" --dry-run
check deps-installs-when-none 0 "will install torch into $tmp/nowhere" "" -- "$B" $O="$tmp/debian-12" SPPLAN_VENV="$tmp/nowhere" "$deps" --dry-run
check deps-venv-packages 0 "wanted: .*python3-venv" "" -- "$B" $O="$tmp/debian-12" SPPLAN_VENV="$tmp/nowhere" "$deps" --dry-run
check deps-skip-torch 0 "torch: skipped" "python3-venv" -- "$B" $O="$tmp/debian-12" SPPLAN_VENV="$tmp/nowhere" SPPLAN_SKIP_TORCH=1 "$deps" --dry-run
check deps-unsupported-os 2 "ID=fedora is not supported" "wanted:" -- "$P" $O="$tmp/fedora-40" "$deps" --dry-run

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
