#!/usr/bin/env bash
# bench/engine/compare_gpu.py --zero-sweep --smoke: DeepSpeed ZeRO 2 and ZeRO 3 on tiny-llama at 256
# and 512 tokens on the CPU, with the first Python that imports transformers and deepspeed:
# SPPLAN_VENV's (default ~/.cache/spplan/venv), then python3. Checks the JSONL it writes.
# Exit 77 (skipped) when no Python has them. Usage: compare_gpu_zero_sweep_test.sh SOURCE_DIR
set -u
src=$1

find_python() {
  local py
  for py in "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
    if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import transformers, torch, deepspeed' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

run_sweep() {  # PY OUT_JSONL TABLE
  if ! "$1" "$src/bench/engine/compare_gpu.py" --zero-sweep --smoke --out "$2" >"$3" 2>&1; then
    cat "$3"
    echo "FAIL: compare_gpu.py --zero-sweep --smoke exited non-zero"
    return 1
  fi
  grep -v WARNING "$3" || true  # DeepSpeed logs a warning line per process on a CPU
}

# Two lengths x two runners in order; every row ran and counted at least one forward of each
# module that holds parameters; ZeRO 3's count equals ZeRO 2's (the same model, the same
# checkpointing: the hooks change what a forward does, not how many there are).
check_rows() {  # PY OUT_JSONL
  "$1" - "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
got = [(r["seq"], r["runner"]) for r in rows]
want = [(256, "ds-zero2"), (256, "ds-zero3"), (512, "ds-zero2"), (512, "ds-zero3")]
assert got == want, (got, want)
for r in rows:
    assert r["exit"] == 0 and r["step_time_s"] > 0, r
    assert r["param_modules"] > 0 and r["param_module_forwards"] >= r["param_modules"], r
    assert r["loss"] == "chunked-4096" and r["sweep"] == "zero" and r["model"] == "tiny-llama", r
for zero2, zero3 in zip(rows[0::2], rows[1::2]):
    assert zero3["param_module_forwards"] == zero2["param_module_forwards"], (zero2, zero3)
print("compare_gpu zero sweep smoke: " + ", ".join(
    "%s s%d %.3f s %d forwards" % (r["runner"], r["seq"], r["step_time_s"], r["param_module_forwards"])
    for r in rows))
PY
}

py=$(find_python) || { echo "no Python with transformers, torch and deepspeed: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run_sweep "$py" "$tmp/out.jsonl" "$tmp/table.txt" || exit 1
check_rows "$py" "$tmp/out.jsonl"
