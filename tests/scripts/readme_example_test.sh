#!/usr/bin/env bash
# README.md's worked example is this build's output: the block between "<!-- example: begin -->"
# and "<!-- example: end -->" holds "$ spplan ARGS..." and what `spplan ARGS...` prints. A costmodel
# or report change that moves a number fails here until the README is rerun (so that
# the landing page shows real output).
# Usage: readme_example_test.sh REPO_ROOT SPPLAN
set -euo pipefail
root=$1
spplan=$2
# shellcheck source=tests/scripts/render_checks.sh
. "$(dirname "$0")/render_checks.sh" readme_example_test

# The fenced block inside the markers, without the fences.
sed -n '/^<!-- example: begin -->$/,/^<!-- example: end -->$/p' "$root/README.md" | grep -v '^<!-- example' |
  grep -v '^```$' > "$tmp/block" || true
[ -s "$tmp/block" ] || fail "README.md has no worked example between the markers"
command=$(head -n 1 "$tmp/block")
case $command in
  '$ spplan '*) ;;
  *) fail "the example's first line is not \"\$ spplan ...\": $command" ;;
esac
tail -n +2 "$tmp/block" > "$tmp/expected"
read -r -a args <<< "${command#\$ spplan }"
"$spplan" "${args[@]}" > "$tmp/actual" 2>&1 || fail "spplan ${args[*]}: exit $?"
diff -u "$tmp/expected" "$tmp/actual" > "$tmp/diff" || fail "README.md's example differs from this build's output:
$(cat "$tmp/diff")"
echo "readme_example_test: README.md's example is this build's output ($(wc -l < "$tmp/actual") lines)"
