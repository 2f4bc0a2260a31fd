#!/usr/bin/env bash
# One command for a stay on a GPU node (BUILD-NOTES.md section 9: build, then measure, one JSON
# line per run, is the shape that fits a lease). Everything lands under $OUT:
#   build      the engine-only configuration against the node's torch (build-gpu/)   build.log
#   kernels    the engine's LibTorch unit tests (FusedCuda.*: the fused CUDA kernels against
#              their ATen references, fp32 and bf16) and bench_fused_kernels  unit_tests.json, kernels.txt
#   calibrate  spplan calibrate: kernel fits on this GPU -> calibrated.toml            calibrate.log
#   validate   spplan validate engine --json: every GPU case priced with the preset and with
#              calibrated.toml, plus the max-seq boundary cases                        validate_engine.json
#   compare    bench/engine/compare_gpu.py: engine vs HF (+ Liger, + DeepSpeed when installed)
#                                                                                      compare_gpu.jsonl
#   longest_peers  bench/engine/longest_gpu.py: the engine's and HF + Liger's longest sequence with
#              the same knobs under one memory cap (qwen3-0.6b, 16 GiB)                longest_peers.jsonl
#   runs       the engine cases of validation's gpu_h100_measured.csv again, plus the fit
#              boundary, fp32 GQA, bf16 tiled loss and a run past the device (exit 3)  engine_runs.jsonl
#   longest    qwen3-0.6b and 1.7b at the max-seq of ALST's recipe on this GPU and at 1.1x (exit 3),
#              on a 2-layer cut of each (stage_longest says why)                      longest.jsonl
#   profile    Nsight Compute on each fused kernel in bench_fused_kernels (its 4th launch: past the
#              warm-ups): throughput against the GPU's peaks, occupancy, launch shape  ncu_kernels.csv
#   slack      the caching allocator's slack near this GPU's limit: qwen3-0.6b steps at the
#              max-seq with and without the slack allowance, between, and past (stage_slack) slack.jsonl
#   trl        bench/engine/trl_gpu.py: TRL's `trl sft` of spplan's --format trl exports (qwen3-0.6b,
#              and qwen3-4b without --quick): 16K with the chunked loss and the full logits, max-seq
#              with and without expandable segments; peak allocated/reserved and step time beside
#              the trl record's prediction (needs the trl and datasets wheels); last, one 16K run
#              with torch's memory history on and nvidia-smi sampling, read by `spplan check`
#              (real inputs for check's readers)                 trl_gpu.jsonl, trl_snapshot/
#   zero_sweep bench/engine/compare_gpu.py --zero-sweep: DeepSpeed ZeRO 3 against ZeRO 2 on one GPU,
#              qwen3-0.6b and 1.7b at 4K, 16K and 64K, with the parameter gathers counted: ZeRO 3's
#              per-module host cost as a function of module length          zero_sweep.jsonl
# and summary.txt (the device, software versions, one line per stage).
#
# Usage: OUT=DIR scripts/gpu-measure.sh [--quick] [--shard I/N] [--deadline S] [--pack FILE] [STAGE...]
#        (OUT defaults to gpu-out/;
#        no STAGE: all of them, in the order above). A later stage uses what an earlier one left in
#        OUT (validate reads calibrated.toml), so a lease with a per-command time limit can run
#        them one command at a time:  scripts/gpu-measure.sh build; scripts/gpu-measure.sh calibrate; ...
#        --quick: the short case lists (validate --quick, compare --quick, the first 6 runs).
#        --shard I/N: validate and compare run every N-th case from the I-th (validate_engine.I-of-N.json,
#        compare_gpu.I-of-N.jsonl), so their full lists (about 20 engine runs; 8 cases x 2-4 runners)
#        fit commands of 10 minutes: --shard 0/3, 1/3, 2/3.
#        --deadline S: start no stage and no run case once S seconds have passed since the script
#        started (what was started finishes), so a lease's command limit ends the script, not a kill.
#        --pack FILE: after every stage and run case, OUT as a .tar.gz in FILE: what a lease copies
#        back holds everything measured up to a kill.
#        --lease: one command of a short GPU lease (15 minutes of device time in all, machine start
#        included; 10 minutes a command): with no STAGE, what no lease has measured yet, most needed
#        first: build trl zero_sweep kernels profile (the 26 and 30 November leases measured the engine,
#        calibrate, compare and slack). Under --lease trl runs --quick and zero_sweep's and trl's
#        runs are cut at 170 s each, and neither starts a case past the deadline; the kernels stage
#        runs the fused kernels' tests and bench only; compare runs one case (compare_gpu.py --one,
#        240 s a run). --deadline 420 unless given, so a run started just before it still ends
#        inside a 10-minute command.
# Needs third_party_bundle/ where the node has no toml++ / nlohmann-json / Eigen
# (scripts/bundle-headers.sh, run where they are installed). The wheels in third_party_bundle/whl
# (scripts/bundle-wheels.sh: Liger-Kernel, DeepSpeed; SPPLAN_WHEELS names another folder) are
# installed first, into a folder under TMPDIR put first on PYTHONPATH: the node has no index.
# shellcheck disable=SC2317  # the stage_* functions below are called by name: "stage_$s"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-gpu-out}
mkdir -p "$out"
quick=0
lease=0
shard=""
deadline=""
pack=""
stages=()
# A flag's value, or one line and exit 2 when it has none (a missing value must not leave the flag
# unset: the script would then run every stage).
value_of() {  # value_of FLAG ALLOWED ARGS_LEFT...
  if [ $# -lt 3 ] || [ -z "$3" ]; then
    echo "gpu-measure: $1: value '${3:-}' is not valid (allowed: $2)" >&2
    exit 2
  fi
  echo "$3"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --lease) lease=1 ;;
    --shard) shard=$(value_of --shard "I/N, e.g. 0/3" "${@:2}") || exit 2; shift ;;
    --deadline) deadline=$(value_of --deadline "whole seconds, e.g. 480" "${@:2}") || exit 2; shift ;;
    --pack) pack=$(value_of --pack "a file name ending in .tar.gz" "${@:2}") || exit 2; shift ;;
    build | kernels | calibrate | validate | compare | longest_peers | runs | longest | profile | slack | trl | zero_sweep) stages+=("$1") ;;
    *) echo "gpu-measure: unknown argument '$1' (allowed: --quick, --lease, --shard I/N, --deadline S, --pack FILE, build, kernels, calibrate, validate, compare, longest_peers, runs, longest, profile, slack, trl, zero_sweep)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$shard" ] && ! [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]]; then
  echo "gpu-measure: --shard: value '$shard' is not valid (allowed: I/N, e.g. 0/3)" >&2
  exit 2
fi
if [ -n "$deadline" ] && ! [[ "$deadline" =~ ^[0-9]+$ ]]; then
  echo "gpu-measure: --deadline: value '$deadline' is not valid (allowed: whole seconds, e.g. 480)" >&2
  exit 2
fi
if [ -n "$pack" ] && [[ "$pack" != *.tar.gz ]]; then
  echo "gpu-measure: --pack: value '$pack' is not valid (allowed: a file name ending in .tar.gz)" >&2
  exit 2
fi
lease_run_s=""
if [ "$lease" = 1 ]; then
  # What a lease most needs first, so a deadline cuts the least of it: the HF / TRL stack most users
  # run, where the planner's held-out errors are largest, then ZeRO 3's unpriced host cost, then the
  # kernels (30 s) whose bandwidth is still short of the target and why (profile: ncu, a few minutes).
  [ ${#stages[@]} -eq 0 ] && stages=(build trl zero_sweep kernels profile)
  [ -z "$deadline" ] && deadline=420
  lease_run_s=170
fi
[ ${#stages[@]} -eq 0 ] && stages=(build kernels calibrate validate compare longest_peers runs longest profile slack trl zero_sweep)
spplan=build-gpu/spplan
. scripts/lib/torch-python.sh
spplan_find_torch >/dev/null 2>&1 || true
python=${SPPLAN_TORCH_PY:-python3}

note() { echo "$*" | tee -a "$out/summary.txt"; }
# True once --deadline has passed (SECONDS: bash's count since the script started).
past_deadline() { [ -n "$deadline" ] && [ "$SECONDS" -ge "$deadline" ]; }
# --pack: what was measured so far, in one file (written aside, then moved: never half a file).
pack_out() {
  [ -n "$pack" ] || return 0
  tar czf "$pack.part" -C "$(dirname "$out")" "$(basename "$out")" && mv "$pack.part" "$pack"
}

# The peers' wheels, installed without an index or dependencies (bundle-wheels.sh bundles what the
# node lacks) and first on PYTHONPATH for every Python this script starts. A failed install is
# noted, not fatal: compare_gpu.py leaves out a peer that does not import.
install_wheels() {
  local dir=${SPPLAN_WHEELS:-third_party_bundle/whl} site=${TMPDIR:-/tmp}/spplan-gpu-site wheels
  wheels=("$dir"/*.whl)
  [ -e "${wheels[0]}" ] || return 0
  if "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
      "${wheels[@]}" >"$out/wheels.log" 2>&1; then
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    note "wheels: ${#wheels[@]} from $dir installed in $site"
  else
    note "wheels: installing $dir failed ($(tail -n1 "$out/wheels.log")); peers that need them are left out"
  fi
}

stage_build() {
  if ! SPPLAN_ENGINE_ONLY=1 SPPLAN_JOBS=${SPPLAN_JOBS:-$(nproc)} SPPLAN_BUILD_DIR=build-gpu scripts/build.sh \
      >"$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    note "build: failed (build.log)"
    return 1
  fi
  {
    "$spplan" --version  # the commit measured (SPPLAN_GIT_COMMIT on a copied tree)
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    # Distribution metadata: liger_kernel has no __version__.
    "$python" -c 'import importlib.metadata as md, torch
v = {"torch": torch.__version__, "cuda": torch.version.cuda}
for m in ("transformers", "liger-kernel", "deepspeed"):
    try: v[m] = md.version(m)
    except md.PackageNotFoundError: v[m] = "not installed"
print("versions: " + ", ".join(k + " " + str(x) for k, x in v.items()))'
  } >>"$out/summary.txt" 2>&1
  note "build: ok"
}

stage_kernels() {
  local tests=build-gpu/engine_tiling_unit_tests bench=build-gpu/bench/engine/bench_fused_kernels rc=0
  if [ -x "$tests" ]; then
    # FusedCuda.* first and alone: the GPU's verdict comes back even if the CPU cases run long.
    timeout 120 "$tests" --gtest_filter='*FusedCuda.*' --gtest_output="json:$out/fused_cuda_tests.json" \
      >"$out/kernels.txt" 2>&1 || rc=1
    # gtest's closing lines: "[  PASSED  ] N tests.", "[  SKIPPED ] N tests, listed below:", likewise FAILED.
    count() {
      local n
      n=$(sed -n "s/^\[  $1 *\] \([0-9]*\) tests\{0,1\}[.,].*/\1/p" "$out/kernels.txt" | tail -n1)
      echo "${n:-0}"
    }
    note "kernels: FusedCuda.* exit $rc: passed $(count PASSED), skipped $(count SKIPPED), failed $(count FAILED)"
    local all=0
    if [ "$lease" = 1 ]; then
      note "kernels: the other LibTorch unit tests not run (--lease: they run on the CPU, as CI's do)"
    else
    timeout 240 "$tests" --gtest_filter='-*FusedCuda.*' --gtest_output="json:$out/unit_tests.json" \
      >>"$out/kernels.txt" 2>&1 || all=$?
    note "kernels: the other LibTorch unit tests exit $all"
    [ "$all" = 0 ] || rc=1
    fi
  else
    note "kernels: $tests not built (no GoogleTest: scripts/bundle-headers.sh bundles its sources)"
    rc=1
  fi
  if [ -x "$bench" ]; then
    local b=0
    timeout 120 "$bench" >>"$out/kernels.txt" 2>&1 || b=$?
    note "kernels: bench_fused_kernels exit $b (kernels.txt)"
    [ "$b" = 0 ] || rc=1
  else
    note "kernels: $bench not built (no fused CUDA kernels)"
    rc=1
  fi
  return "$rc"
}

stage_calibrate() {
  "$spplan" calibrate --out "$out/calibrated.toml" 2>"$out/calibrate.log"
  local rc=$?
  note "calibrate: exit $rc ($(grep -c 'residual' "$out/calibrate.log") fits; calibrate.log, calibrated.toml)"
  return "$rc"
}

stage_validate() {
  local flags=(--json) name=validate_engine
  [ "$quick" = 1 ] && flags+=(--quick)
  [ -f "$out/calibrated.toml" ] && flags+=(--calibration "$out/calibrated.toml")
  if [ -n "$shard" ]; then
    flags+=(--shard "$shard")
    name="validate_engine.${shard%/*}-of-${shard#*/}"
  fi
  "$spplan" validate engine "${flags[@]}" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  "$python" - "$out/$name.json" >>"$out/summary.txt" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print("validate engine (%s): %d cases (%d failed), boundary %d of %d right" % (sys.argv[1], j["cases"], j["failed"], j["boundary_right"], j["boundary_cases"]))
print("  calibrated (%s): time mean %.1f %% max %.1f %%, memory mean %.1f %% max %.1f %%" % (
    j["machine"], j["mean_time_error_pct"], j["max_time_error_pct"], j["mean_mem_error_pct"], j["max_mem_error_pct"]))
if "preset" in j:
    print("  preset (%s): time mean %.1f %% max %.1f %%, memory mean %.1f %% max %.1f %%" % (
        j["preset"], j["preset_mean_time_error_pct"], j["preset_max_time_error_pct"], j["preset_mean_mem_error_pct"],
        j["preset_max_mem_error_pct"]))
EOF
  note "validate: exit $rc ($name.json)"
  tail -4 "$out/summary.txt"
  return "$rc"
}

stage_compare() {
  local name=compare_gpu
  [ -n "$shard" ] && name="compare_gpu.${shard%/*}-of-${shard#*/}"
  local flags=(--spplan "$spplan" --out "$out/$name.jsonl")
  [ "$quick" = 1 ] && flags+=(--quick)
  # A lease's runs at most 240 s each (compare_gpu's own limit is 900): a peer that hangs must not
  # take the calibrate and slack stages after it (DeepSpeed's first run builds its fused Adam).
  [ "$lease" = 1 ] && flags+=(--one --timeout 240)
  [ -n "$shard" ] && flags+=(--shard "$shard")
  "$python" bench/engine/compare_gpu.py "${flags[@]}" >"$out/$name.txt" 2>&1
  local rc=$?
  cat "$out/$name.txt"
  note "compare: exit $rc ($name.txt, $name.jsonl)"
  return "$rc"
}

stage_longest_peers() {
  "$python" bench/engine/longest_gpu.py --spplan "$spplan" --out "$out/longest_peers.jsonl" >"$out/longest_peers.txt" 2>&1
  local rc=$?
  cat "$out/longest_peers.txt"
  note "longest_peers: exit $rc (longest_peers.txt, longest_peers.jsonl)"
  return "$rc"
}

stage_runs() {
  # name | flags after --model (every case: 1 GPU, 4 steps, --json)
  local cases=(
    "q06-16k|qwen3-0.6b --seq 16k --precision bf16 --act-ckpt full"
    "q06-32k|qwen3-0.6b --seq 32k --precision bf16 --act-ckpt full"
    "q06-36k-boundary|qwen3-0.6b --seq 36k --precision bf16 --act-ckpt full"
    "q06-37k-boundary|qwen3-0.6b --seq 37k --precision bf16 --act-ckpt full"
    "q06-4k-fp32-gqa|qwen3-0.6b --seq 4k --precision fp32 --act-ckpt none"
    "q06-64k-oom|qwen3-0.6b --seq 64k --precision bf16 --act-ckpt full"
    "q06-32k-tiled-loss|qwen3-0.6b --seq 32k --precision bf16 --act-ckpt full --tiled-loss"
    "l1b-16k|llama-3.2-1b --seq 16k --precision bf16 --act-ckpt full"
    "q17-16k|qwen3-1.7b --seq 16k --precision bf16 --act-ckpt full"
    "q17-4k-nockpt|qwen3-1.7b --seq 4k --precision bf16 --act-ckpt none"
    "q4b-8k-z1-offopt|qwen3-4b --seq 8k --precision bf16 --act-ckpt full --zero 1 --offload-optimizer cpu"
    "q17-16k-tiled-mlp|qwen3-1.7b --seq 16k --precision bf16 --act-ckpt full --tiled-mlp"
    "q17-32k-z1-ckpt-offload|qwen3-1.7b --seq 32k --precision bf16 --act-ckpt offload --zero 1 --offload-optimizer cpu"
    "q06-16k-z3-offload|qwen3-0.6b --seq 16k --precision bf16 --act-ckpt full --zero 3 --offload-optimizer cpu --offload-params cpu"
    "l1b-32k-z3-offload|llama-3.2-1b --seq 32k --precision bf16 --act-ckpt full --zero 3 --offload-optimizer cpu --offload-params cpu"
  )
  [ "$quick" = 1 ] && cases=("${cases[@]:0:6}")
  : >"$out/engine_runs.jsonl"
  local c
  for c in "${cases[@]}"; do
    run_case engine_runs.jsonl "${c%%|*}" 420 4 "${c#*|} --sp 1" '{}'
  done
}

# The longest sequence of qwen3-0.6b and qwen3-1.7b on this GPU with ALST's recipe (ZeRO 3 with
# optimizer and parameters offloaded, checkpoints offloaded, tiled MLP and loss), as `spplan
# max-seq` answers, confirmed by a step at that length and one at 1.1x (expected: exit 3). On a
# 2-layer cut of each model: max-seq answers the same for 2 and 28 layers (the device peak is one
# layer's working set, the checkpoints are on the host), while a step of the full model at about
# 1M tokens is priced at 15-20 minutes, past a lease command's 10.
stage_longest() {
  local preset
  preset=$(device_preset) || { note "longest: no GPU preset for this device (H100 and H200 known)"; return 1; }
  local recipe="--sp 1 --precision bf16 --zero 3 --offload-optimizer cpu --offload-params cpu --act-ckpt offload --tiled-mlp --tiled-loss"
  : >"$out/longest.jsonl"
  local m cut max past rc=0
  for m in qwen3-0.6b qwen3-1.7b; do
    cut=$out/$m-2l.toml
    sed -e 's/^num_hidden_layers = .*/num_hidden_layers = 2/' -e "s/^name = .*/name = \"$m-2l\"/" \
      "configs/models/$m.toml" >"$cut"
    # shellcheck disable=SC2086  # recipe is a list of flags
    if ! max=$("$spplan" max-seq --model "$cut" --gpu "$preset" --gpus 1 --trainer engine $recipe --json |
      "$python" -c 'import json, sys; print(json.load(sys.stdin)["max_seq"])'); then
      note "longest: $m: max-seq failed"
      rc=1
      continue
    fi
    past=$((max * 11 / 10 / 1024 * 1024))
    run_case longest.jsonl "$m-2l-max-seq" 420 1 "$cut --seq $max $recipe" "{\"max_seq\": $max, \"expect\": \"runs\"}"
    run_case longest.jsonl "$m-2l-1.1x" 420 1 "$cut --seq $past $recipe" "{\"max_seq\": $max, \"expect\": \"out of memory\"}"
  done
  return "$rc"
}

# The preset of this node's GPU (nvidia-smi's name), or nothing and status 1.
device_preset() {
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)" in
    *H200*) echo h200-141gb ;;
    *H100*) echo h100-80gb ;;
    *) return 1 ;;
  esac
}

# The caching allocator's slack near the limit. The costmodel counts 5 % of the memory a
# step frees as slack (allocator_fragmentation, from runs not short of memory); on the H100 a 37K
# qwen3-0.6b step ran where that allowance said it would not: near the limit the allocator reused
# its cached blocks and kept 0.34 GiB, not 3.3 (docs/accuracy.md). `spplan max-seq` gives the
# longest sequence with the allowance and without it; a 2-step run at each, at their midpoint and
# 1K past the second (expected: out of memory) records the peaks allocated and reserved there.
stage_slack() {
  local preset lengths knobs=(--sp 1 --precision bf16 --act-ckpt full)
  preset=$(device_preset) || { note "slack: no GPU preset for this device (H100 and H200 known)"; return 1; }
  # max, without slack, and the lengths to run (each rounded down to 1K, each once).
  if ! lengths=$("$spplan" max-seq --model qwen3-0.6b --gpu "$preset" --gpus 1 --trainer engine "${knobs[@]}"       --zero 0 --no-tiled-mlp --no-tiled-loss --json | "$python" -c '
import json, sys
j = json.load(sys.stdin)
lo, hi = j["max_seq"], j["max_seq_without_allocator_slack"]
k = lambda n: n // 1024 * 1024
print(lo, hi, " ".join(str(n) for n in sorted({lo, k((lo + hi) // 2), hi, k(hi) + 1024})))'); then
    note "slack: max-seq failed"
    return 1
  fi
  read -r -a lengths <<<"$lengths"
  local max=${lengths[0]} bare=${lengths[1]} n expect
  note "slack: $preset: max-seq $max with the slack allowance, $bare without"
  : >"$out/slack.jsonl"
  for n in "${lengths[@]:2}"; do
    expect=runs
    [ "$n" -gt "$bare" ] && expect="out of memory"
    run_case slack.jsonl "q06-slack-$n" 300 2 "qwen3-0.6b --seq $n ${knobs[*]}" \
      "{\"max_seq\": $max, \"max_seq_without_allocator_slack\": $bare, \"expect\": \"$expect\"}"
  done
}

# The stack most users run, on this GPU: TRL's own launch of the trl record's plans.
stage_trl() {
  local preset flags=()
  preset=$(device_preset) || { note "trl: no GPU preset for this device (H100 and H200 known)"; return 1; }
  { [ "$quick" = 1 ] || [ "$lease" = 1 ]; } && flags+=(--quick)
  # shellcheck disable=SC2207  # whole words: the flags python_limits prints
  flags+=($(python_limits))
  "$python" bench/engine/trl_gpu.py --spplan "$spplan" --gpu "$preset" "${flags[@]}" --out "$out/trl_gpu.jsonl" \
    --keep "$out/trl_snapshot" --work "${TMPDIR:-/tmp}/spplan-trl-gpu" >"$out/trl_gpu.txt" 2>&1
  local rc=$?
  tail -n 8 "$out/trl_gpu.txt"
  note "trl: exit $rc (trl_gpu.txt, trl_gpu.jsonl, trl_snapshot/)"
  return "$rc"
}

# DeepSpeed ZeRO 3 against ZeRO 2 on this GPU at three lengths and two model widths.
stage_zero_sweep() {
  local flags=(--zero-sweep --spplan "$spplan" --out "$out/zero_sweep.jsonl")
  # shellcheck disable=SC2207  # whole words: the flags python_limits prints
  flags+=($(python_limits))
  "$python" bench/engine/compare_gpu.py "${flags[@]}" >"$out/zero_sweep.txt" 2>&1
  local rc=$?
  cat "$out/zero_sweep.txt"
  note "zero_sweep: exit $rc (zero_sweep.txt, zero_sweep.jsonl)"
  return "$rc"
}

# What a Python stage that runs many cases is told of the lease: --timeout, each run's limit, and
# --deadline, the seconds left before the script's own deadline (it starts no case past it).
python_limits() {
  [ -n "$lease_run_s" ] && printf -- '--timeout %s ' "$lease_run_s"
  [ -n "$deadline" ] && printf -- '--deadline %s ' "$((deadline > SECONDS ? deadline - SECONDS : 0))"
  return 0
}

# Where a kernel misses its bandwidth, the first question is why: memory throughput against the
# peak, occupancy, registers and the launch's shape, per kernel (one ncu process each, CSV).
stage_profile() {
  local bench=build-gpu/bench/engine/bench_fused_kernels k rc=0
  if ! command -v ncu >/dev/null; then
    note "profile: no ncu (Nsight Compute) on this node; the kernels stage's bench times (kernels.txt) are each kernel's bandwidth, without the why"
    return 1
  fi
  [ -x "$bench" ] || { note "profile: $bench not built"; return 1; }
  : >"$out/ncu_kernels.csv"
  for k in add_rms_norm_forward_kernel add_rms_norm_backward_kernel qk_norm_rope_forward_kernel \
           qk_norm_rope_backward_kernel swiglu_forward_kernel swiglu_backward_kernel \
           cross_entropy_stats_kernel cross_entropy_grad_kernel; do
    past_deadline && { note "profile: $k not run (--deadline $deadline s passed)"; continue; }
    # Into a report first: the bench's own lines would mix with --csv on stdout.
    if timeout 120 ncu -k "regex:$k" -s 3 -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis -f -o "$out/ncu_$k" "$bench" >/dev/null 2>>"$out/ncu.err"; then
      echo "# $k" >>"$out/ncu_kernels.csv"
      ncu --import "$out/ncu_$k.ncu-rep" --csv --page details >>"$out/ncu_kernels.csv" 2>>"$out/ncu.err" || rc=1
    else
      note "profile: ncu on $k failed (ncu.err)"
      rc=1
    fi
    rm -f "$out/ncu_$k.ncu-rep"
  done
  note "profile: exit $rc (ncu_kernels.csv)"
  return "$rc"
}

# run_case FILE NAME TIMEOUT STEPS FLAGS EXTRA: `spplan run --model FLAGS` on one GPU for STEPS
# steps, one JSON line appended to OUT/FILE: the case, its flags, exit code, wall seconds, the
# run's --json report (null without one), the end of its stderr, and EXTRA's keys (a JSON object).
run_case() {
  local file=$1 name=$2 limit=$3 steps=$4 line=$5 extra=$6 flags start rc
  if past_deadline; then
    note "$name: not run (--deadline $deadline s passed)"
    return 0
  fi
  read -r -a flags <<<"$line"
  start=$(date +%s)
  timeout "$limit" "$spplan" run --model "${flags[@]}" --nproc 1 --steps "$steps" --json >"$out/run.json" 2>"$out/run.err"
  rc=$?
  "$python" - "$name" "$rc" "$(($(date +%s) - start))" "$out/run.json" "$out/run.err" "$line" "$extra" \
    >>"$out/$file" <<'EOF'
import json, sys
name, rc, wall, out, err, flags, extra = sys.argv[1:]
try:
    result = json.loads(open(out).read().strip().splitlines()[-1])
except Exception:
    result = None
tail = open(err, errors="replace").read().splitlines()[-6:]
line = {"case": name, "flags": flags, "exit": int(rc), "wall_s": int(wall), "result": result, "stderr_tail": tail}
line.update(json.loads(extra))
print(json.dumps(line))
EOF
  note "$name: exit $rc ($(tail -1 "$out/run.err"))"
  rm -f "$out/run.json" "$out/run.err"
  pack_out
}

[ "$lease" = 1 ] && note "lease: ${stages[*]}, deadline $deadline s"
install_wheels
failed=0
for s in "${stages[@]}"; do
  if [ "$s" != build ] && [ ! -x "$spplan" ]; then
    note "$s: skipped ($spplan is not built: run the build stage first)"
    failed=1
    continue
  fi
  if past_deadline; then
    note "$s: not started (--deadline $deadline s passed)"
    failed=1
    continue
  fi
  "stage_$s" || failed=1
  pack_out
done
exit "$failed"
