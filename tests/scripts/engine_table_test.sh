#!/usr/bin/env bash
# scripts/engine-table.py: every kept `validate engine` report in validation/engine renders, one
# table row per case, and engine/README.md holds each rendered row as it is (the README's engine
# tables come from the reports, not from hand edits); bad input is one line and exit 2.
# Usage: engine_table_test.sh REPO_ROOT
set -euo pipefail
root=$1
script=$root/scripts/engine-table.py
# shellcheck source=tests/scripts/render_checks.sh
. "$(dirname "$0")/render_checks.sh" engine_table_test

shopt -s nullglob
reports=("$root"/validation/engine/*.json)
[ ${#reports[@]} -gt 0 ] || fail "no report in validation/engine"
for report in "${reports[@]}"; do
  python3 "$script" "$report" > "$tmp/out.md" || fail "$report: exit $?"
  cases=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$report")
  # The case table: a header, a rule and one row per case, up to the first blank line.
  rows=$(sed '/^$/q' "$tmp/out.md" | grep -c '^|')
  [ "$rows" -eq $((cases + 2)) ] || fail "$report: $rows table lines for $cases cases"
  sed '/^$/q' "$tmp/out.md" | grep '^|' | tail -n +3 > "$tmp/rows.md"
  while IFS= read -r row; do
    grep -qxF -- "$row" "$root/engine/README.md" || fail "engine/README.md lacks the rendered row: $row"
  done < "$tmp/rows.md"
done

# Bad input: a missing file, a file that is not JSON, a JSON object that is not a report.
echo '{"rows": [' > "$tmp/broken.json"
echo '{"cases": 3}' > "$tmp/other.json"
for bad in "$tmp/missing.json" "$tmp/broken.json" "$tmp/other.json"; do
  expect_bad_input "$bad" python3 "$script" "$bad"
done
echo "engine_table_test: ${#reports[@]} report(s) render and match engine/README.md"
