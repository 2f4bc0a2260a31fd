#!/usr/bin/env bash
# scripts/gpu-measure.sh's profile stage on a fake node: a stand-in ncu on PATH (it writes the
# report named by -o, and prints CSV for --import) and stand-in binaries. Checks one CSV section per
# fused kernel, the reports removed after import, a failing kernel noted, and no ncu noted.
# Usage: gpu_measure_profile_test.sh REPO_ROOT
set -euo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_measure_profile_test: $*" >&2; exit 1; }

mkdir -p "$tmp/repo/scripts/lib" "$tmp/repo/build-gpu/bench/engine" "$tmp/bin"
cp "$root/scripts/gpu-measure.sh" "$tmp/repo/scripts/"
cp "$root/scripts/lib/torch-python.sh" "$tmp/repo/scripts/lib/"
printf '#!/bin/sh\nexit 0\n' >"$tmp/repo/build-gpu/spplan"
printf '#!/bin/sh\necho "bench line that must not reach the CSV"\n' >"$tmp/repo/build-gpu/bench/engine/bench_fused_kernels"
chmod +x "$tmp/repo/build-gpu/spplan" "$tmp/repo/build-gpu/bench/engine/bench_fused_kernels"
cat >"$tmp/bin/ncu" <<'NCU'
#!/usr/bin/env bash
# -k regex:NAME ... -o BASE BENCH  |  --import BASE.ncu-rep --csv --page details
if [ "$1" = --import ]; then
  echo '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
  echo "\"0\",\"$(basename "$2" .ncu-rep)\",\"GPU Speed Of Light Throughput\",\"DRAM Throughput\",\"%\",\"81.5\""
  exit 0
fi
name=${2#regex:}
[ "$name" = "${NCU_FAIL:-none}" ] && { echo "ncu: failed on $name" >&2; exit 1; }
while [ $# -gt 1 ]; do [ "$1" = -o ] && base=$2; shift; done
"$1" >/dev/null
touch "$base.ncu-rep"
NCU
chmod +x "$tmp/bin/ncu"

run() {  # run [VAR=VALUE...]: the profile stage, OUT in $tmp/out
  rm -rf "$tmp/out"
  env "$@" SPPLAN_WHEELS="$tmp/none" OUT="$tmp/out" bash "$tmp/repo/scripts/gpu-measure.sh" profile >"$tmp/stdout" 2>&1 || true
}

run PATH="$tmp/bin:$PATH"
csv=$tmp/out/ncu_kernels.csv
[ "$(grep -c '^# ' "$csv")" = 8 ] || fail "not 8 kernel sections: $(cat "$csv")"
[ "$(grep -c 'DRAM Throughput' "$csv")" = 8 ] || fail "not 8 kernels' rows: $(cat "$csv")"
grep -q '^# cross_entropy_grad_kernel$' "$csv" || fail "the cross-entropy's second kernel is missing"
! grep -q "bench line" "$csv" || fail "the bench's output reached the CSV"
! ls "$tmp/out"/*.ncu-rep >/dev/null 2>&1 || fail "reports left in OUT (they would fill the pack)"
grep -q "^profile: exit 0 (ncu_kernels.csv)$" "$tmp/out/summary.txt" || fail "summary: $(cat "$tmp/out/summary.txt")"

run PATH="$tmp/bin:$PATH" NCU_FAIL=swiglu_backward_kernel
[ "$(grep -c '^# ' "$tmp/out/ncu_kernels.csv")" = 7 ] || fail "a failing kernel: not 7 sections left"
grep -q "^profile: ncu on swiglu_backward_kernel failed (ncu.err)$" "$tmp/out/summary.txt" || fail "the failure not noted: $(cat "$tmp/out/summary.txt")"
grep -q "^profile: exit 1 " "$tmp/out/summary.txt" || fail "a failing kernel did not fail the stage"

run PATH="/usr/bin:/bin"
grep -q "^profile: no ncu (Nsight Compute) on this node; the kernels stage's bench times (kernels.txt) are each kernel's bandwidth, without the why$" "$tmp/out/summary.txt" || fail "no ncu: $(cat "$tmp/out/summary.txt")"
echo "gpu_measure_profile_test: 8 kernels profiled into one CSV, a failure and a missing ncu noted"
