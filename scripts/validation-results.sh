#!/usr/bin/env bash
# Regenerates validation/results/published.json: the planner's predictions against the published
# measurements (`spplan validate published --json`), which spplan-gui reads to show the measured
# accuracy for the selected GPU beside every predicted number (gui/trust.hpp). Run it after any
# change to the costmodel or to validation/published_visible.csv, and commit the result.
#
# Usage: scripts/validation-results.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=validation/results/published.json
mkdir -p validation/results
# Exit 1 means a target was missed: the file is still the report, so keep it.
rc=0
"$build/spplan" validate published validation/published_visible.csv --json > "$out.tmp" || rc=$?
if [ "$rc" -gt 1 ]; then rm -f "$out.tmp"; echo "validation-results: spplan exited $rc" >&2; exit "$rc"; fi
mv "$out.tmp" "$out"
echo "wrote $out"
