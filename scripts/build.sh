#!/usr/bin/env bash
# Configures and builds spplan into build/ (2 jobs). The engine is built against the torch wheel
# that scripts/lib/torch-python.sh finds (SPPLAN_TORCH_PYTHON, else install-deps.sh's venv, else
# the active python3), and skipped when there is none. The GUI needs Qt 6 unless
# SPPLAN_CMAKE_ARGS=-DSPPLAN_BUILD_GUI=OFF.
#
# Usage: scripts/build.sh [--print-torch]
#   --print-torch   print which Python's torch the build would use, and exit (0 found, 1 none,
#                   2 SPPLAN_TORCH_PYTHON cannot import torch)
# Env: SPPLAN_ENGINE_ONLY=1   only the planner libraries, spplan and spplan-engine; needs only
#                             LibTorch, toml++ and nlohmann-json (a GPU node: docs/gpu-node.md)
#      SPPLAN_BUILD_ENGINE=OFF  skip the engine
#      SPPLAN_TORCH_PYTHON, SPPLAN_VENV   where to look for torch (above)
#      SPPLAN_BUILD_DIR (default build), SPPLAN_JOBS (default 2), SPPLAN_CMAKE_ARGS (passed to cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/torch-python.sh

engine_only=${SPPLAN_ENGINE_ONLY:-0}
engine=${SPPLAN_BUILD_ENGINE:-ON}
build_dir=${SPPLAN_BUILD_DIR:-build}

case "${1:-}" in
  "" | --print-torch) ;;
  *) echo "build: unknown argument '$1' (allowed: --print-torch)" >&2; exit 2 ;;
esac
if [ "$engine_only" = 1 ] && [ "$engine" != ON ]; then
  echo "build: SPPLAN_ENGINE_ONLY=1 builds the engine; it contradicts SPPLAN_BUILD_ENGINE=$engine" >&2
  exit 2
fi

# Importing torch takes seconds: look for it only when the answer is used.
torch_rc=0
if [ "${1:-}" = --print-torch ] || [ "$engine" = ON ]; then
  spplan_find_torch || torch_rc=$?
fi
if [ "${1:-}" = --print-torch ]; then
  if [ "$torch_rc" -eq 0 ]; then
    printf 'python=%s\nversion=%s\ncmake_prefix=%s\n' "$SPPLAN_TORCH_PY" "$SPPLAN_TORCH_VERSION" "$SPPLAN_TORCH_PREFIX"
  else
    echo "build: $SPPLAN_TORCH_WHY" >&2
  fi
  exit "$torch_rc"
fi

if [ "$engine" = ON ] && [ "$torch_rc" -ne 0 ]; then
  if [ "$engine_only" = 1 ]; then
    echo "build: SPPLAN_ENGINE_ONLY=1 needs torch: $SPPLAN_TORCH_WHY" >&2
    exit 2
  elif [ "$torch_rc" -eq 2 ]; then
    # An explicit choice that does not work is an error, not a reason to drop the engine quietly.
    echo "build: $SPPLAN_TORCH_WHY" >&2
    exit 2
  fi
  echo "build: $SPPLAN_TORCH_WHY; building without the engine" >&2
  engine=OFF
fi
if [ "$engine" = ON ]; then
  echo "build: engine against torch $SPPLAN_TORCH_VERSION of $SPPLAN_TORCH_PY"
fi

engine_only_flag=OFF
[ "$engine_only" = 1 ] && engine_only_flag=ON
prefix=""
[ "$engine" = ON ] && prefix=$SPPLAN_TORCH_PREFIX
# shellcheck disable=SC2086  # SPPLAN_CMAKE_ARGS is a list of arguments
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPPLAN_BUILD_ENGINE="$engine" \
  -DSPPLAN_ENGINE_ONLY="$engine_only_flag" ${prefix:+-DCMAKE_PREFIX_PATH="$prefix"} ${SPPLAN_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "${SPPLAN_JOBS:-2}"
