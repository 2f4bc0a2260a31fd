#!/usr/bin/env bash
# Open-ended fuzzing, for a developer before and after a change to a reader (a loader, a parser,
# the command line): each libFuzzer target (fuzz/) of the ASan + UBSan build runs for N minutes
# from a corpus kept between runs (.fuzz-corpus/NAME, git-ignored), grown from the seeds and every
# regression input. The test command's gate (scripts/sanitize.sh) is deterministic instead: a fixed
# number of inputs from a fixed seed. A finding is left in build-asan/fuzz-failures/NAME/: fix it,
# then copy the input into fuzz/regressions/NAME/ (named for what it broke) so every build replays it.
#
# Usage: scripts/fuzz.sh [--minutes N] [TARGET ...]   (default: 10 minutes, every target in turn)
# Env: SPPLAN_SANITIZE_DIR (default build-asan), SPPLAN_JOBS (build jobs, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/asan-build.sh

minutes=10
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes)
      minutes=${2:-}
      case "$minutes" in
        '' | *[!0-9]* | 0) echo "fuzz: --minutes: value '$minutes' is not allowed (allowed: a whole number of minutes >= 1)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    -*) echo "fuzz: unknown argument '$1' (allowed: --minutes N, target names)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

spplan_asan_build fuzz
known=$("$spplan_asan_dir/fuzz/spplan_fuzz_seeds")
if [ "${#targets[@]}" -eq 0 ]; then read -r -a targets <<<"$(echo $known)"; fi
for name in "${targets[@]}"; do
  if ! grep -qx "$name" <<<"$known"; then
    echo "fuzz: target '$name' is not known (allowed: $(echo $known))" >&2
    exit 2
  fi
done

failed=()
for name in "${targets[@]}"; do
  corpus=".fuzz-corpus/$name"
  spplan_fuzz_seed_corpus "$name" "$corpus"
  log="$spplan_asan_dir/fuzz-$name.log"
  status=ok
  if ! spplan_fuzz_run "$name" "$corpus" "$log" -max_total_time=$((minutes * 60)); then
    status=FAILED
    failed+=("$name")
    tail -40 "$log" >&2
  fi
  echo "fuzz: fuzz_$name: $status after $(spplan_fuzz_inputs "$log") inputs in $minutes min, corpus $(ls "$corpus" | wc -l) inputs"
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in $spplan_asan_dir/fuzz-failures/; see the log above)" >&2
  exit 1
fi
