#!/usr/bin/env bash
# Regenerates validation/results/NAME.json for every validation/NAME.csv (NAME less a trailing
# "_visible"): the planner's predictions against the published and our own measured runs
# (`spplan validate published --json`), which spplan-gui reads to show the measured accuracy for
# the selected GPU and trainer beside every predicted number (gui/trust.hpp). Run it after any
# change to the costmodel or to a validation CSV, and commit the results (tests/gui checks that
# they are today's reports).
#
# Usage: scripts/validation-results.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mkdir -p validation/results
for csv in validation/*.csv; do
  # published_visible.csv's report keeps the name published.json (tests/cli reads it there).
  name=$(basename "$csv" .csv)
  out=validation/results/${name%_visible}.json
  # Exit 1 means a target was missed: the file is still the report, so keep it.
  rc=0
  "$build/spplan" validate published "$csv" --json > "$out.tmp" || rc=$?
  if [ "$rc" -gt 1 ]; then rm -f "$out.tmp"; echo "validation-results: spplan exited $rc on $csv" >&2; exit "$rc"; fi
  mv "$out.tmp" "$out"
  echo "wrote $out"
done
