#!/usr/bin/env bash
# bench/engine/compare_gpu.py --smoke: tiny-llama at 256 tokens on the CPU, engine and Hugging Face
# side by side, with the first Python that imports transformers: SPPLAN_VENV's (default
# ~/.cache/spplan/venv), then python3. Checks the table and the JSONL it writes. Exit 77 (skipped)
# when no Python has transformers. Usage: compare_gpu_smoke_test.sh SOURCE_DIR SPPLAN_BINARY
set -u
src=$1 spplan=$2
for py in "${SPPLAN_VENV:-$HOME/.cache/spplan/venv}/bin/python" "$(command -v python3)"; do
  if [ -n "$py" ] && [ -x "$py" ] && "$py" -c 'import transformers, torch' 2>/dev/null; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    if ! "$py" "$src/bench/engine/compare_gpu.py" --smoke --spplan "$spplan" --out "$tmp/out.jsonl" >"$tmp/table.txt" 2>&1; then
      cat "$tmp/table.txt"
      echo "FAIL: compare_gpu.py --smoke exited non-zero"
      exit 1
    fi
    cat "$tmp/table.txt"
    # One row per runner (engine, hf, and DeepSpeed ZeRO 2 and 3 where deepspeed imports: the export
    # check installs it), each with a positive step time and the engine's ratio 1.00.
    exec "$py" - "$tmp/out.jsonl" <<'PY'
import importlib.util, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runners = [r["runner"] for r in rows]
expected = ["engine", "hf"] + (["ds-zero2", "ds-zero3"] if importlib.util.find_spec("deepspeed") else [])
assert runners == expected, (runners, expected)
for r in rows:
    assert r["exit"] == 0 and r["step_time_s"] > 0, r
    assert r["case"] == "tiny-llama s256 ckpt-full" and "torch" in r["versions"], r
print("compare_gpu smoke: " + ", ".join("%s %.3f s" % (r["runner"], r["step_time_s"]) for r in rows))
PY
  fi
done
echo "no Python with transformers and torch: skipped"
exit 77
