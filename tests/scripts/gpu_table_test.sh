#!/usr/bin/env bash
# scripts/gpu-table.py: every kept GPU lease (validation/gpu/*/) renders with today's costmodel,
# and README.md holds each rendered table row as it is (its GPU tables come from the raw files,
# priced again by spplan, never from hand edits: a costmodel change that moves a GPU number fails
# here until the README is regenerated); bad input is one line and exit 2.
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
  runs=$(grep -c . "$lease/engine_runs.jsonl")
  # One table row per engine run, each with a fit verdict.
  [ "$(grep -cE '\| (right|wrong|-) \|$' "$tmp/out.md")" -eq "$runs" ] || fail "$lease: not one row per run ($runs)"
  grep '^|' "$tmp/out.md" | grep -v '^|---' > "$tmp/rows.md"
  grep -v '^|' "$tmp/out.md" | grep . >> "$tmp/rows.md"
  while IFS= read -r row; do
    grep -qxF -- "$row" "$root/README.md" || fail "README.md lacks the rendered line: $row"
  done < "$tmp/rows.md"
done

# Bad input: a missing folder, a folder without a manifest, a run line that is not JSON.
mkdir -p "$tmp/empty" "$tmp/broken"
cp "${leases[0]}"/* "$tmp/broken/"
echo '{"case": ' >> "$tmp/broken/engine_runs.jsonl"
for bad in "$tmp/missing" "$tmp/empty" "$tmp/broken"; do
  expect_bad_input "$bad" python3 "$script" "$bad" --spplan "$spplan"
done
echo "gpu_table_test: ${#leases[@]} lease(s) render and match README.md"
