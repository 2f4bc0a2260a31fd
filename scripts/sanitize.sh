#!/usr/bin/env bash
# The planner, simulator and CLI (no engine, no GUI) built with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer at -O1 (scripts/lib/asan-build.sh): their tests run there, failing on
# any report, and then each libFuzzer target (fuzz/) replays its seeds and every regression input
# and runs a fixed number of mutated inputs from a fixed seed on a fresh corpus: a bounded run
# (scripts/test.sh calls this). libFuzzer's coverage feedback can still steer two runs to slightly
# different inputs (fuzz/README.md). Open-ended fuzzing, with a corpus kept
# between runs, is scripts/fuzz.sh. The engine is left out (LibTorch is not built with ASan, and its
# tests take most of CI's hour already: docs/performance.md "Reliability").
#
# Usage: scripts/sanitize.sh [--no-fuzz]
# Env: SPPLAN_SANITIZE_DIR (default build-asan), SPPLAN_FUZZ_RUNS (mutated inputs per target after
#      the corpus, default 10000), SPPLAN_FUZZ_SEED (libFuzzer's -seed, default 1), SPPLAN_JOBS
#      (default 2), CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache) as for any CMake build.
# A failing input is left in $SPPLAN_SANITIZE_DIR/fuzz-failures/NAME/; once fixed, copy it into
# fuzz/regressions/NAME/ so that tests/fuzz replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/asan-build.sh

fuzz=1
case "${1:-}" in
  "") ;;
  --no-fuzz) fuzz=0 ;;
  *) echo "sanitize: unknown argument '$1' (allowed: --no-fuzz)" >&2; exit 2 ;;
esac
runs=${SPPLAN_FUZZ_RUNS:-10000}
seed=${SPPLAN_FUZZ_SEED:-1}
for pair in "SPPLAN_FUZZ_RUNS=$runs" "SPPLAN_FUZZ_SEED=$seed"; do
  case "${pair#*=}" in
    '' | *[!0-9]*) echo "sanitize: $pair is not allowed (allowed: a whole number, e.g. 10000)" >&2; exit 2 ;;
  esac
done

spplan_asan_build sanitize
build_dir=$spplan_asan_dir
start=$SECONDS
# The property tests' 2,000 plans each take about a minute under ASan; 200 reach the same code.
export SPPLAN_PROPERTY_PLANS=${SPPLAN_PROPERTY_PLANS:-200}
# The script tests run shell scripts, and the launch tests (bench_*, check_launch) Python trainers
# with spplan's plan and export beside them: not spplan's code beyond what the other tests run under
# ASan, and this build has no engine (`spplan run`) they launch. The normal build runs them.
ctest --test-dir "$build_dir" --output-on-failure -j "${SPPLAN_JOBS:-2}" --timeout 600 \
  -E '^(scripts_|bench_|check_launch$|engine_only_configure)'
echo "sanitize: tests took $((SECONDS - start)) s"

[ "$fuzz" = 1 ] || exit 0
start=$SECONDS
# The bodies write each input under $TMPDIR, whose name appears in messages: one fixed folder, so
# that the inputs' coverage, and so the inputs the gate explores, do not depend on the checkout.
export TMPDIR=/tmp/spplan-fuzz-gate
mkdir -p "$TMPDIR"
failed=()
for name in $("$build_dir/fuzz/spplan_fuzz_seeds"); do
  # A fresh corpus each time: a corpus grown by earlier runs would make the inputs differ.
  corpus="$build_dir/fuzz-gate/$name"
  rm -rf "$corpus"
  spplan_fuzz_seed_corpus "$name" "$corpus"
  log="$build_dir/fuzz-$name.log"
  if ! spplan_fuzz_run "$name" "$corpus" "$log" -runs="$runs" -seed="$seed"; then
    failed+=("$name")
    tail -40 "$log" >&2
  fi
  echo "sanitize: fuzz_$name: $(spplan_fuzz_inputs "$log") inputs (seed $seed), $(ls "$corpus" | wc -l) in the corpus"
done
echo "sanitize: fuzzing took $((SECONDS - start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitize: fuzz targets failed: ${failed[*]} (inputs in $build_dir/fuzz-failures/; see the log above)" >&2
  exit 1
fi
