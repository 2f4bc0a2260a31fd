#!/usr/bin/env bash
# engine/cmake/check_rooms.cmake, the engine's include rule (engine/README.md "Rooms"): the tree as
# it is passes, and each include in the table below, added to a copy of the tree, fails the check
# with its one line naming the file, the header and what that room may include.
#
# Usage: engine_rooms_test.sh SOURCE_DIR [CMAKE]
set -uo pipefail
src=$(cd "$1" && pwd)
cmake=${2:-cmake}
check=$src/engine/cmake/check_rooms.cmake
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if ! out=$("$cmake" -DENGINE_DIR="$src/engine" -P "$check" 2>&1); then
  fail "the tree as it is: $out"
fi

# file | line added | the error line expected
cases=(
  "parallel/comm.hpp|#include \"engine/run/launcher.hpp\"|engine/parallel/comm.hpp: includes \"engine/run/launcher.hpp\": room parallel may include engine/device, planner/core, planner/config"
  "device/memory_meter.cpp|#include \"engine/model/model.hpp\"|engine/device/memory_meter.cpp: includes \"engine/model/model.hpp\": room device may include planner/core, planner/config"
  "io/data.cpp|#include \"engine/device/precision.hpp\"|engine/io/data.cpp: includes \"engine/device/precision.hpp\": room io may include planner/core, planner/config"
  "model/model.cpp|#include \"engine/run/train.hpp\"|engine/model/model.cpp: includes \"engine/run/train.hpp\": room model may include engine/device, engine/io, engine/parallel, planner/core, planner/config"
  "run/train.cpp|#include \"engine/measure/calibrate.hpp\"|engine/run/train.cpp: includes \"engine/measure/calibrate.hpp\": room run may include engine/device, engine/io, engine/parallel, engine/model, planner/core, planner/config, planner/costmodel"
  "run/worker.cpp|#include \"planner/search/search.hpp\"|engine/run/worker.cpp: includes \"planner/search/search.hpp\": room run may include engine/device, engine/io, engine/parallel, engine/model, planner/core, planner/config, planner/costmodel"
  "measure/validate.cpp|#include \"simulator/simulate.hpp\"|engine/measure/validate.cpp: includes \"simulator/simulate.hpp\": room measure may include engine/device, engine/io, engine/parallel, engine/model, engine/run, planner/core, planner/config, planner/search, planner/corpus"
  "model/cuda/common.cuh|#include \"engine/run/options.hpp\"|engine/model/cuda/common.cuh: includes \"engine/run/options.hpp\": room model may include engine/device, engine/io, engine/parallel, planner/core, planner/config"
  "stray.cpp|// a source outside the rooms|engine/stray.cpp: not in a room (allowed: device, io, parallel, model, run, measure, or main.cpp)"
)
for c in "${cases[@]}"; do
  IFS='|' read -r file line want <<<"$c"
  rm -rf "$tmp/engine" && cp -r "$src/engine" "$tmp/engine"
  echo "$line" >>"$tmp/engine/$file"
  if out=$("$cmake" -DENGINE_DIR="$tmp/engine" -P "$check" 2>&1); then
    fail "$file + '$line': passed the check"
  elif ! grep -qxF "$want" <<<"$out"; then
    fail "$file + '$line': expected the line '$want', got: $out"
  fi
done

[ "$failures" -eq 0 ] && echo "engine rooms: ${#cases[@]} wrong includes refused, the tree passes"
exit $((failures > 0))
