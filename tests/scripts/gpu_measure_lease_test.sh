#!/usr/bin/env bash
# scripts/gpu-measure.sh --lease and its slack stage on a fake node (a lease is one prepared
# command): a stand-in nvidia-smi naming an H200, a stand-in build-gpu/spplan that hands max-seq to
# the real planner and answers `run` as a GPU would (a JSON report, or out of memory and exit 3 from
# FAKE_OOM_FROM tokens on), stand-ins for the build, compare_gpu.py and trl_gpu.py that record how
# they were called. Checks the default lease's stages in order with its deadline, trl and the ZeRO
# sweep told the lease's run limit and the seconds left; then a lease naming the 30 November
# stages: compare called with --one, the other unit tests skipped, and the slack stage's lengths
# (max-seq with and without the allocator's slack allowance, their midpoint and 1K past) each run
# once with its expectation.
# Usage: gpu_measure_lease_test.sh REPO_ROOT SPPLAN
set -euo pipefail
root=$1
real_spplan=$(realpath "$2")  # the fake node runs it from its own folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu_measure_lease_test: $*" >&2; exit 1; }

repo=$tmp/repo
mkdir -p "$repo/scripts/lib" "$repo/build-gpu" "$repo/bench/engine" "$repo/configs" "$tmp/bin"
cp "$root/scripts/gpu-measure.sh" "$repo/scripts/"
cp "$root/scripts/lib/torch-python.sh" "$repo/scripts/lib/"
ln -s "$root/configs/models" "$repo/configs/models"
printf '#!/bin/sh\necho "build $*" >>"%s/calls"\n' "$tmp" >"$repo/scripts/build.sh"
for tool in compare trl; do
  printf 'import sys\nopen("%s/calls", "a").write("%s " + " ".join(sys.argv[1:]) + "\\n")\n' "$tmp" "$tool" \
    >"$repo/bench/engine/${tool}_gpu.py"
done
printf '#!/bin/sh\necho "NVIDIA H200"\n' >"$tmp/bin/nvidia-smi"
cat >"$repo/build-gpu/spplan" <<FAKE
#!/usr/bin/env bash
case "\$1" in
  max-seq) exec "$real_spplan" "\$@" ;;
  calibrate) echo "calibrate \$*" >>"$tmp/calls"; echo 'name = "fake"' >"\$3"; exit 0 ;;
  run)
    seq=0
    while [ \$# -gt 0 ]; do [ "\$1" = --seq ] && seq=\$2; shift; done
    if [ "\$seq" -ge "\${FAKE_OOM_FROM:-999999999}" ]; then
      echo '{"oom": true, "rank": 0}'; echo "spplan-engine: rank 0: out of device memory" >&2; exit 3
    fi
    echo "{\"seq_len\": \$seq, \"peak_memory_bytes\": 100, \"peak_reserved_bytes\": 120}"
    echo "step 2/2 done" >&2 ;;
  *) echo "spplan fake" ;;
esac
FAKE
chmod +x "$repo/scripts/build.sh" "$repo/build-gpu/spplan" "$tmp/bin/nvidia-smi"

# What the planner answers for the slack stage's case on an H200 (the stage's own question).
read -r lo hi < <("$real_spplan" max-seq --model qwen3-0.6b --gpu h200-141gb --gpus 1 --trainer engine --sp 1 \
  --precision bf16 --act-ckpt full --zero 0 --no-tiled-mlp --no-tiled-loss --json |
  python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["max_seq"], j["max_seq_without_allocator_slack"])')
[ "$lo" -gt 0 ] && [ "$hi" -ge "$lo" ] || fail "max-seq answered $lo and $hi"
past=$((hi / 1024 * 1024 + 1024))
mid=$(((lo + hi) / 2 / 1024 * 1024))

# The default lease: what no lease has measured yet.
rm -f "$tmp/calls"
PATH="$tmp/bin:$PATH" SPPLAN_WHEELS="$tmp/none" OUT="$tmp/lease" TMPDIR="$tmp" \
  bash "$repo/scripts/gpu-measure.sh" --lease >"$tmp/stdout" 2>&1 || true
summary=$tmp/lease/summary.txt
head -n1 "$summary" | grep -qx "lease: build trl zero_sweep kernels profile, deadline 420 s" ||
  fail "the default lease's first line: $(head -n1 "$summary")"
order=$(grep -oE '^(build: ok|trl: exit|zero_sweep: exit|kernels: build-gpu/engine_tiling_unit_tests not built|profile: no ncu)' "$summary" |
  cut -d: -f1 | tr '\n' ' ')
[ "$order" = "build trl zero_sweep kernels profile " ] || fail "the default lease ran '$order': $(cat "$summary")"
python3 - "$tmp/calls" "$tmp" <<'PY' || fail "trl and the sweep were not told the lease's limits: $(cat "$tmp/calls")"
import sys
calls = [l.split() for l in open(sys.argv[1]) if l.startswith(("trl ", "compare "))]
trl, sweep = calls
def value(args, flag):
    return args[args.index(flag) + 1]
assert trl[0] == "trl" and "--quick" in trl and value(trl, "--gpu") == "h200-141gb", trl
assert value(trl, "--keep") == sys.argv[2] + "/lease/trl_snapshot", trl
assert sweep[0] == "compare" and "--zero-sweep" in sweep and value(sweep, "--out") == sys.argv[2] + "/lease/zero_sweep.jsonl", sweep
for args in trl, sweep:
    assert value(args, "--timeout") == "170", args
    assert 0 < int(value(args, "--deadline")) <= 420, args  # the seconds left of the lease's 420
PY

# A lease naming the stages the 30 November lease ran, its deadline given.
rm -f "$tmp/calls"
PATH="$tmp/bin:$PATH" FAKE_OOM_FROM=$past SPPLAN_WHEELS="$tmp/none" OUT="$tmp/out" \
  bash "$repo/scripts/gpu-measure.sh" --lease --deadline 480 build kernels calibrate compare slack >"$tmp/stdout" 2>&1 || true
summary=$tmp/out/summary.txt
head -n1 "$summary" | grep -qx "lease: build kernels calibrate compare slack, deadline 480 s" ||
  fail "the lease's first line: $(head -n1 "$summary")"
# Each stage's closing line, in the lease's order.
order=$(grep -oE '^(build: ok|kernels: build-gpu/engine_tiling_unit_tests not built|compare: exit|calibrate: exit|slack: h200-141gb)' "$summary" |
  cut -d: -f1 | tr '\n' ' ')
[ "$order" = "build kernels calibrate compare slack " ] || fail "stages ran as '$order': $(cat "$summary")"
grep -q "^compare --spplan build-gpu/spplan --out $tmp/out/compare_gpu.jsonl --one --timeout 240$" "$tmp/calls" ||
  fail "compare not called with --one and a run's limit: $(cat "$tmp/calls")"
! grep -q "other LibTorch unit tests exit" "$summary" || fail "the lease ran the CPU-side unit tests"

grep -q "^slack: h200-141gb: max-seq $lo with the slack allowance, $hi without$" "$summary" ||
  fail "slack's max-seq line: $(grep slack "$summary")"
want=$(printf '%s\n' "$lo" "$mid" "$hi" "$past" | sort -nu | tr '\n' ' ')
got=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    seq = int(j["case"].rsplit("-", 1)[1])
    oom = seq >= int(sys.argv[2])
    assert j["expect"] == ("out of memory" if oom else "runs"), j
    assert j["exit"] == (3 if oom else 0), j
    assert (j["result"] or {}).get("oom", False) == oom, j
    assert j["max_seq"] == int(sys.argv[3]) and j["max_seq_without_allocator_slack"] == int(sys.argv[4]), j
    print(seq, end=" ")' "$tmp/out/slack.jsonl" "$past" "$lo" "$hi") || fail "slack.jsonl: $(cat "$tmp/out/slack.jsonl")"
[ "$got" = "$want" ] || fail "slack ran at '$got' (expected '$want')"

# A deadline that has passed starts nothing: each stage says so.
PATH="$tmp/bin:$PATH" SPPLAN_WHEELS="$tmp/none" OUT="$tmp/out2" \
  bash "$repo/scripts/gpu-measure.sh" --lease --deadline 0 >/dev/null 2>&1 && fail "a lease that ran nothing exited 0"
[ "$(grep -c 'not started (--deadline 0 s passed)' "$tmp/out2/summary.txt")" = 5 ] ||
  fail "deadline 0: $(cat "$tmp/out2/summary.txt")"
echo "gpu_measure_lease_test: the default lease's 5 stages in order, trl and the sweep within its limits;" \
  "the 30 November stages in order; slack at $want(max-seq $lo, $hi without slack)"
