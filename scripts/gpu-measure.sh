#!/usr/bin/env bash
# One command for a short stay on a GPU node (BUILD-NOTES.md section 9: build, then run every case,
# one JSON line per run, is the shape that fits a lease): builds the engine-only configuration
# against the node's torch and runs the engine cases of validation's gpu_h100_measured.csv again,
# plus what issue 9 fixed: the fit boundary with expandable segments (36K, 37K), fp32 with
# grouped-query heads, the bf16 tiled loss, and a run past the device (exit 3).
#
# Usage: OUT=DIR scripts/gpu-measure.sh [--quick]     (OUT defaults to gpu-out/)
# Writes DIR/engine_runs.jsonl (one object a run: case, flags, exit code, the run's JSON or its
# last stderr lines), DIR/build.log, DIR/summary.txt. Needs third_party_bundle/ where the node has
# no toml++ / nlohmann-json (scripts/bundle-headers.sh, run where they are installed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-gpu-out}
mkdir -p "$out"
quick=0
[ "${1:-}" = --quick ] && quick=1

if ! SPPLAN_ENGINE_ONLY=1 SPPLAN_JOBS=${SPPLAN_JOBS:-$(nproc)} SPPLAN_BUILD_DIR=build-gpu scripts/build.sh \
    >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/summary.txt" 2>&1

# name | flags after --model (every case: 1 GPU, 4 steps, --json)
cases=(
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
for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a flags <<<"${c#*|}"
  start=$(date +%s)
  timeout 420 build-gpu/spplan run --model "${flags[@]}" --sp 1 --nproc 1 --steps 4 --json \
    >"$out/run.json" 2>"$out/run.err"
  rc=$?
  python3 - "$name" "$rc" "$(($(date +%s) - start))" "$out/run.json" "$out/run.err" "${c#*|}" \
    >>"$out/engine_runs.jsonl" <<'EOF'
import json, sys
name, rc, wall, out, err, flags = sys.argv[1:]
try:
    result = json.loads(open(out).read().strip().splitlines()[-1])
except Exception:
    result = None
tail = open(err, errors="replace").read().splitlines()[-6:]
print(json.dumps({"case": name, "flags": flags, "exit": int(rc), "wall_s": int(wall), "result": result, "stderr_tail": tail}))
EOF
  echo "$name: exit $rc ($(tail -1 "$out/run.err"))" | tee -a "$out/summary.txt"
done
rm -f "$out/run.json" "$out/run.err"
