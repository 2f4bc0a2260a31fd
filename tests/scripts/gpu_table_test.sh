#!/usr/bin/env bash
# scripts/gpu-table.py: every kept GPU lease (validation/gpu/*/) renders with today's costmodel,
# and docs/accuracy.md holds each rendered table row as it is (its GPU tables come from the raw files,
# priced again by spplan, never from hand edits: a costmodel change that moves a GPU number fails
# here until docs/accuracy.md is regenerated); bad input is one line and exit 2.
# Usage: gpu_table_test.sh REPO_ROOT SPPLAN
set -euo pipefail
root=$1
spplan=$2
script=$root/scripts/gpu-table.py
# shellcheck source=tests/scripts/render_checks.sh
. "$(dirname "$0")/render_checks.sh" gpu_table_test

shopt -s nullglob
leases=("$root"/validation/gpu/*/)
[ ${#leases[@]} -gt 0 ] || fail "no lease in validation/gpu"
for lease in "${leases[@]}"; do
  python3 "$script" "$lease" --spplan "$spplan" > "$tmp/out.md" || fail "$lease: exit $?"
  # One table row per engine run (the runs stage's and the slack stage's, where the lease had
  # them), each with a fit verdict; and one slack row per slack run that ran.
  runs=$(cat "$lease"/engine_runs.jsonl "$lease"/slack.jsonl 2>/dev/null | grep -c . || true)
  [ "$runs" -gt 0 ] || fail "$lease: no engine run"
  [ "$(grep -cE '\| (right|wrong|-) \|$' "$tmp/out.md")" -eq "$runs" ] || fail "$lease: not one row per run ($runs)"
  if [ -f "$lease/slack.jsonl" ]; then
    ran=$(grep -c '"exit": 0' "$lease/slack.jsonl" || true)
    [ "$(grep -cE '^\| q06-slack-[0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$tmp/out.md")" -eq "$ran" ] ||
      fail "$lease: not one slack row per slack run that ran ($ran)"
  fi
  grep '^|' "$tmp/out.md" | grep -v '^|---' > "$tmp/rows.md"
  grep -v '^|' "$tmp/out.md" | grep . >> "$tmp/rows.md"
  while IFS= read -r row; do
    grep -qxF -- "$row" "$root/docs/accuracy.md" || fail "docs/accuracy.md lacks the rendered line: $row"
  done < "$tmp/rows.md"
  # Each rendered table whole, its separator line and row order included (a hand edit that broke
  # one table's separator passed the line check above).
  python3 - "$tmp/out.md" "$root/docs/accuracy.md" <<'PY' || fail "$lease: a rendered table is not in docs/accuracy.md as rendered"
import sys
out, doc = open(sys.argv[1]).read(), open(sys.argv[2]).read()
tables, block = [], []
for line in out.splitlines() + [""]:
    if line.startswith("|"):
        block.append(line)
    elif block:
        tables.append("\n".join(block) + "\n")
        block = []
missing = [t.splitlines()[0] for t in tables if t not in doc]
if missing:
    print("gpu_table_test: not whole in docs/accuracy.md: " + "; ".join(missing), file=sys.stderr)
    sys.exit(1)
PY
done

# A lease with the longest stage's runs (made up here: a 2-layer cut at the planner's max-seq that
# ran, and 1.1x of it that ran out of memory): one row each, both verdicts right.
mkdir -p "$tmp/longest"
cp "${leases[0]}"/* "$tmp/longest/"
sed -e 's/^num_hidden_layers = .*/num_hidden_layers = 2/' "$root/configs/models/qwen3-0.6b.toml" > "$tmp/longest/q-2l.toml"
recipe="--sp 1 --precision bf16 --zero 3 --offload-optimizer cpu --offload-params cpu --act-ckpt offload --tiled-mlp --tiled-loss"
# shellcheck disable=SC2086  # recipe is a list of flags
max=$("$spplan" max-seq --model "$tmp/longest/q-2l.toml" --gpu h100-80gb --gpus 1 --trainer engine $recipe --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["max_seq"])')
printf '{"case": "q-max", "flags": "out/q-2l.toml --seq %d %s", "exit": 0, "result": {"peak_memory_bytes": 7.0e10, "step_time_s": 90}, "max_seq": %d}\n' \
  "$max" "$recipe" "$max" > "$tmp/longest/longest.jsonl"
printf '{"case": "q-1.1x", "flags": "out/q-2l.toml --seq %d %s", "exit": 3, "result": {"oom": true}, "max_seq": %d}\n' \
  $((max * 11 / 10)) "$recipe" "$max" >> "$tmp/longest/longest.jsonl"
python3 "$script" "$tmp/longest" --spplan "$spplan" > "$tmp/longest.md" || fail "longest: exit $?"
grep -q "^| q-max | $max | $max | $max | yes | 65.19 | .* | right |$" "$tmp/longest.md" || fail "longest: no right row at max-seq: $(cat "$tmp/longest.md")"
grep -q "^| q-1.1x | $((max * 11 / 10)) | $max | $max | out of memory | - | - | - | right |$" "$tmp/longest.md" ||
  fail "longest: no right out-of-memory row at 1.1x"

# Bad input: a missing folder, a folder without a manifest, a run line that is not JSON.
mkdir -p "$tmp/empty" "$tmp/broken"
cp "${leases[0]}"/* "$tmp/broken/"
echo '{"case": ' >> "$tmp/broken/engine_runs.jsonl"
for bad in "$tmp/missing" "$tmp/empty" "$tmp/broken"; do
  expect_bad_input "$bad" python3 "$script" "$bad" --spplan "$spplan"
done
expect_bad_input "$tmp/no-spplan" python3 "$script" "${leases[0]}" --spplan "$tmp/no-spplan"
echo "gpu_table_test: ${#leases[@]} lease(s) render and match docs/accuracy.md"
