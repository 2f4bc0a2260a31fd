#!/usr/bin/env bash
# The planner, simulator and CLI (no engine, no GUI) built with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer at -O1: their tests run there, failing on any report, and then each
# libFuzzer target (fuzz/) runs a bounded time from its seeds. scripts/test.sh calls this after the
# normal build; the engine is left out (LibTorch is not built with ASan, and its tests take most of
# CI's hour already: README "Reliability").
#
# Usage: scripts/sanitize.sh [--no-fuzz]
# Env: SPPLAN_SANITIZE_DIR (default build-asan), SPPLAN_FUZZ_SECONDS (per target, default 5),
#      SPPLAN_JOBS (default 2), CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache) as for any CMake build.
# A fuzzer failure leaves the input in $SPPLAN_SANITIZE_DIR/fuzz-failures/NAME/; once fixed, copy it
# into fuzz/regressions/NAME/ so that tests/fuzz replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz=1
case "${1:-}" in
  "") ;;
  --no-fuzz) fuzz=0 ;;
  *) echo "sanitize: unknown argument '$1' (allowed: --no-fuzz)" >&2; exit 2 ;;
esac
build_dir=${SPPLAN_SANITIZE_DIR:-build-asan}
seconds=${SPPLAN_FUZZ_SECONDS:-5}
case "$seconds" in
  '' | *[!0-9]*) echo "sanitize: SPPLAN_FUZZ_SECONDS=$seconds is not allowed (allowed: whole seconds, e.g. 5)" >&2; exit 2 ;;
esac
if ! command -v clang++ >/dev/null; then
  echo "sanitize: clang++ not found (scripts/install-deps.sh installs clang and libFuzzer: libclang-rt-dev)" >&2
  exit 2
fi

flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
start=$SECONDS
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DSPPLAN_BUILD_ENGINE=OFF -DSPPLAN_BUILD_GUI=OFF -DSPPLAN_BUILD_BENCH=OFF -DSPPLAN_BUILD_FUZZ=ON >/dev/null
cmake --build "$build_dir" -j "${SPPLAN_JOBS:-2}"
echo "sanitize: build took $((SECONDS - start)) s"

# Any report is a failure: UBSan's too (-fno-sanitize-recover), and leaks at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
# The property tests' 2,000 plans each take about a minute under ASan; 200 reach the same code.
export SPPLAN_PROPERTY_PLANS=${SPPLAN_PROPERTY_PLANS:-200}
# The script tests run shell scripts, not spplan's code; the normal build runs them.
ctest --test-dir "$build_dir" --output-on-failure -j "${SPPLAN_JOBS:-2}" --timeout 600 \
  -E '^(scripts_|engine_only_configure)'
echo "sanitize: tests took $((SECONDS - start)) s"

[ "$fuzz" = 1 ] || exit 0
start=$SECONDS
failed=()
for name in $("$build_dir/fuzz/spplan_fuzz_seeds"); do
  corpus="$build_dir/fuzz-corpus/$name" failures="$build_dir/fuzz-failures/$name"
  mkdir -p "$corpus" "$failures"
  "$build_dir/fuzz/spplan_fuzz_seeds" "$name" . | while read -r seed; do cp "$seed" "$corpus/"; done
  # -timeout: one input running longer is a hang; -close_fd_mask=1: the CLI's tables on stdout.
  if ! "$build_dir/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -close_fd_mask=1 -artifact_prefix="$failures/" -print_final_stats=1 "$corpus" \
       >"$build_dir/fuzz-$name.log" 2>&1; then
    failed+=("$name")
    tail -40 "$build_dir/fuzz-$name.log" >&2
  fi
  echo "sanitize: fuzz_$name: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build_dir/fuzz-$name.log" | grep -o '[0-9]*$' || echo ?) inputs in ${seconds} s"
done
echo "sanitize: fuzzing took $((SECONDS - start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitize: fuzz targets failed: ${failed[*]} (inputs in $build_dir/fuzz-failures/; see the log above)" >&2
  exit 1
fi
